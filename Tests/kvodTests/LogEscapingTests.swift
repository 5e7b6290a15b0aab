import Foundation
import KVOTestSupport
import Testing

/// Every log message is one line: a newline in what kvod logs (a name from a
/// client, a path) is written as `\n` and cannot forge a line of its own.
@Suite struct LogEscapingTests {
    @Test func newlineInALoggedNameIsEscapedNotALineOfItsOwn() throws {
        let folder = try TemporaryDirectory()
        let forged = "2026-01-01T00:00:00+0000 critical kvod: [kvod] forged"
        let kvod = try KVODProcess(socketPath: folder.path + "/a\n\(forged).sock")
        try kvod.terminate()
        let log = kvod.stderrText()
        #expect(log.contains(#"listening on \#(folder.path)/a\n\#(forged).sock"#), "\(log)")
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("2026-01-01") }, "\(log)")
    }
}
