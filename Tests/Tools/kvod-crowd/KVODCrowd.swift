import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kvod-crowd SOCKET COUNT KEYS`: holds COUNT connections to kvod, the i-th
/// observing key path `k<i % KEYS>` of object `crowd`, for tests that need
/// thousands of clients without holding thousands of descriptors themselves
/// (the test process's open-file limit is shared by every test running).
///
/// On stdout: `ready` once every observe is answered. On stdin, `expect E`:
/// reads E events on every connection, checks each is for that connection's
/// key, and answers `ok` or `error: …`. End of stdin closes everything.
@main
enum KVODCrowd {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, let count = Int(arguments[2]), let keys = Int(arguments[3]), keys > 0 else {
            fail("usage: kvod-crowd SOCKET COUNT KEYS")
        }
        raiseOpenFilesLimit(to: count + 64)
        var connections: [LineClient] = []
        connections.reserveCapacity(count)
        for index in 0..<count {
            do {
                let connection = try LineClient(path: arguments[1])
                try connection.send(#"{"op":"observe","object":"crowd","keyPath":"k\#(index % keys)","options":["new"]}"#)
                connections.append(connection)
            } catch {
                fail("connection \(index) failed: \(error)")
            }
        }
        for (index, connection) in connections.enumerated() {
            guard let reply = try? connection.readLine(timeout: 20), reply.contains(#""ok":true"#) else {
                fail("observe \(index) failed")
            }
        }
        say("ready")
        while let command = readLine() {
            guard command.hasPrefix("expect "), let events = Int(command.dropFirst(7)) else { fail("unknown command \(command)") }
            var problem: String?
            for (index, connection) in connections.enumerated() where problem == nil {
                for _ in 0..<events {
                    guard let line = try? connection.readLine(timeout: 20) else {
                        problem = "connection \(index) got too few events"
                        break
                    }
                    if !line.contains(#""keyPath":"k\#(index % keys)""#) { problem = "connection \(index) got \(line)" }
                }
            }
            say(problem.map { "error: \($0)" } ?? "ok")
        }
    }

    /// One line to stdout, written at once (no stdio buffering to flush).
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    static func fail(_ message: String) -> Never {
        say("error: \(message)")
        exit(1)
    }

    static func raiseOpenFilesLimit(to count: Int) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(count) {
            limit.rlim_cur = min(rlim_t(count), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}
