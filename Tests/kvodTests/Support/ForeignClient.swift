import Foundation
import KVOEngine
import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif
import KVOValues

/// A client run as another user: `setpriv` drops to that user and group (with
/// only the supplementary groups given), then `socat` connects to kvod. Lines go through
/// socat's stdin and stdout. Needs root, as the tests' CI runs.
final class ForeignClient {
    private let socat: PipedProcess

    /// Whether this process may switch users (it is root).
    static var canSwitchUsers: Bool { getuid() == 0 }

    init(socketPath: String, user: String, group: String, supplementaryGroups: [String] = []) throws {
        let groups = supplementaryGroups.isEmpty ? "--clear-groups" : "--groups=" + supplementaryGroups.joined(separator: ",")
        socat = try PipedProcess(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                 ["--reuid=\(user)", "--regid=\(group)", groups,
                                  "socat", "-", "UNIX-CONNECT:\(socketPath)"])
    }

    var pid: Int32 { socat.pid }

    func send(_ line: String) throws { try socat.send(line) }

    /// Ends the client's input: socat then half-closes, and kvod closes the connection.
    func close() throws { try socat.closeInput() }

    /// The next line socat printed, as JSON, or a failure after `timeout` seconds.
    func readJSON(timeout: Double = 10) throws -> JSONValue {
        try JSONReader.parse(socat.readLine(timeout: timeout, what: "line from the foreign client"))
    }

    /// Whether kvod closed the connection (socat then ends) within `timeout` seconds.
    func waitForEndOfStream(timeout: Double = 10) throws -> Bool {
        do {
            while true { _ = try socat.readLine(timeout: timeout, what: "the end of the foreign client's stream") }
        } catch is EndOfStream {
            return true
        }
    }

    /// Sends a request and returns its reply (the client observes nothing that
    /// could interleave, or the caller reads events itself).
    func request(_ line: String) throws -> JSONValue {
        try send(line)
        return try readJSON()
    }

    /// Every line up to the reply to a `ping`: what kvod had sent this client
    /// before it answered the ping (events included), in order.
    func linesBeforePing() throws -> [JSONValue] {
        try send(#"{"op":"ping","id":"fence"}"#)
        var lines: [JSONValue] = []
        while true {
            let line = try readJSON()
            if line["id"] == "fence" { return lines }
            lines.append(line)
        }
    }
}
