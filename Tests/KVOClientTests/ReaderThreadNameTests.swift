import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Linux keeps 15 bytes of a thread's name: KVOClient's threads must show whole.
@Suite(.onDedicatedThread) struct ReaderThreadNameTests {
    @Test func theReaderThreadsNameShowsWholeInProc() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.ping()
        let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap {
            try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
                .trimmingCharacters(in: .newlines)
        }
        #expect(names.contains("KVOClient.read"), "threads: \(names.filter { $0.hasPrefix("KVO") })")
        #expect(!names.contains { $0.hasPrefix("KVOClient") && $0 != "KVOClient.read" },
                "a KVOClient thread's name cut short: \(names.filter { $0.hasPrefix("KVOClient") })")
        withExtendedLifetime(connection) {}
    }
}
