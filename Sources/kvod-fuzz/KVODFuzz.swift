#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KVOFuzzing

/// libFuzzer's entry point: one input through ``FuzzHarness``.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzHarness.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

/// `kvod-fuzz`: built with `-sanitize=fuzzer` (scripts/ci/fuzz.sh), it is a
/// libFuzzer binary and takes libFuzzer's arguments; built normally, it runs
/// the inputs (files, or directories of files) given as arguments once each,
/// which is how a corpus or a crash is replayed without the fuzzer.
///
/// libFuzzer's own `main` is not linked in (SwiftPM gives every executable a
/// `main` of its own), so this one calls libFuzzer's driver when the binary
/// has it: the fuzz build exports `LLVMFuzzerRunDriver` for `dlsym` to find.
@main
enum KVODFuzz {
    typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    typealias Driver = @convention(c) (
        UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        Callback
    ) -> CInt

    static func main() {
        if let symbol = dlsym(nil, "LLVMFuzzerRunDriver") {
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(unsafeBitCast(symbol, to: Driver.self)(&argc, &argv, fuzzOneInput))
        }
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: kvod-fuzz FILE-OR-DIRECTORY...\n".utf8))
            exit(2)
        }
        var count = 0
        for path in paths {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("kvod-fuzz: cannot read \(file)\n".utf8))
                    exit(1)
                }
                data.withUnsafeBytes { FuzzHarness.run($0) }
                count += 1
            }
        }
        print("kvod-fuzz: \(count) inputs ran without breaking an invariant")
    }

    private static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [path]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }
    }
}
