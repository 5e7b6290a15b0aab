import Foundation
import Glibc

/// Files named on the command line (`--json-file`, `--resume-file`), read
/// and written with the POSIX calls so that a failure can say why
/// (`strerror`), and so that a replacement is atomic.
enum LocalFile {
    /// Why a file could not be read or written: the path and the system's reason.
    struct Failure: Error {
        let path: String
        let reason: String
        /// The call failed because nothing is at the path.
        let isMissing: Bool
    }

    /// The whole contents of `path`.
    static func read(_ path: String) throws(Failure) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        return try readAll(descriptor, path)
    }

    /// Everything on standard input.
    static func readStandardInput() throws(Failure) -> Data {
        try readAll(STDIN_FILENO, "standard input")
    }

    /// Makes `path` hold `contents` in one step: a reader sees the old
    /// contents or the new ones, never a part (a temporary file beside it,
    /// then `rename`). Not synced to disk: after a power loss the file may
    /// hold older contents, never torn ones.
    static func replace(_ path: String, with contents: String) throws(Failure) {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(temporary) }
        var bytes = Array(contents.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let error = failure(temporary)
                close(descriptor)
                unlink(temporary)
                throw error
            }
            bytes = bytes.dropFirst(written)
        }
        guard close(descriptor) == 0 else { throw failure(temporary) }
        guard rename(temporary, path) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
    }

    private static func readAll(_ descriptor: Int32, _ path: String) throws(Failure) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw failure(path) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[..<count])
        }
    }

    /// The failure `errno` describes.
    private static func failure(_ path: String) -> Failure {
        let number = errno
        return Failure(path: path, reason: String(cString: strerror(number)), isMissing: number == ENOENT)
    }
}
