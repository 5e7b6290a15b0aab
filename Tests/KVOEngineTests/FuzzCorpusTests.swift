import Foundation
import KVOFuzzing
import Testing

/// Every committed fuzz input, replayed through the fuzz harness on each test
/// run: the seeds, the corpus the fuzzer grew, and any input that once broke
/// an invariant (Fuzz/regressions, where each crash goes with a note; see
/// docs/RELIABILITY.md). A broken invariant traps, failing the run.
@Suite struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    @Test func everyCommittedInputKeepsEveryInvariant() throws {
        var count = 0
        for folder in ["seeds", "corpus", "regressions"] {
            let directory = Self.fuzzDirectory.appendingPathComponent(folder)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { continue }
            for name in names.sorted() {
                let data = try Data(contentsOf: directory.appendingPathComponent(name))
                data.withUnsafeBytes { FuzzHarness.run($0) }
                count += 1
            }
        }
        #expect(count >= 800, "found only \(count) inputs under \(Self.fuzzDirectory.path)")
    }
}
