import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two users on one kvod: root (kvod's own user, which may everything) and
/// `nobody`, whom the policy file grants little.
@Suite(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"), .onDedicatedThread)
struct AccessControlTests {
    /// kvod with `policy` (nil: none) on a socket that `nobody` can reach.
    private func startKVOD(policy: String?) throws -> KVODProcess {
        // At debug, every connection's line names its peer (at info only the first after a quiet while).
        var arguments = ["--socket-mode", "0666", "--log-level", "debug"]
        let directory = try TemporaryDirectory.make()
        // kvod reads the policy at start only.
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if let policy {
            let path = directory + "/policy.json"
            try policy.write(toFile: path, atomically: true, encoding: .utf8)
            arguments += ["--policy", path]
        }
        let kvod = try KVODProcess(arguments: arguments)
        // mkdtemp makes the directory 0700; nobody must be able to reach the socket in it.
        chmod(kvod.directory, 0o755)
        return kvod
    }

    static let policy = #"""
        {"grants": [
          {"user": "nobody", "prefix": "public/", "allow": ["read"]},
          {"group": "nogroup", "prefix": "shared/", "allow": ["read", "write"]},
          {"group": "users", "prefix": "team/", "allow": ["write"]}
        ]}
        """#

    @Test func forbiddenWriteChangesNothingAndForbiddenObserveReceivesNothing() throws {
        let kvod = try startKVOD(policy: Self.policy)
        let root = try LineClient(path: kvod.socketPath)
        _ = try root.request(#"{"op":"set","object":"secret/1","keyPath":"k","value":"root's"}"#)
        let nobody = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        let connected = try kvod.waitForLog(containing: "connected (pid=\(nobody.pid) ")
        #expect(connected.contains("uid=65534 gid=65534"), "\(connected)")

        let write = try nobody.request(#"{"op":"set","id":1,"object":"secret/1","keyPath":"k","value":"nobody's"}"#)
        #expect(write["error"]?["code"] == "forbidden", "\(write)")
        let delete = try nobody.request(#"{"op":"delete","id":2,"object":"secret/1"}"#)
        #expect(delete["error"]?["code"] == "forbidden")
        let read = try nobody.request(#"{"op":"get","id":3,"object":"secret/1"}"#)
        #expect(read["error"]?["code"] == "forbidden")
        let observe = try nobody.request(#"{"op":"observe","id":4,"object":"secret/1","keyPath":"k","options":["new","initial"]}"#)
        #expect(observe["error"]?["code"] == "forbidden")
        #expect(try nobody.request(#"{"op":"observe","id":5,"object":"public/1","keyPath":"k","options":["new"]}"#)["ok"] == true)
        #expect(try nobody.request(#"{"op":"set","id":6,"object":"public/1","keyPath":"k","value":1}"#)["error"]?["code"] == "forbidden")
        // Through the group grant:
        #expect(try nobody.request(#"{"op":"set","id":7,"object":"shared/1","keyPath":"k","value":"both"}"#)["ok"] == true)

        // The store is as root left it, and root's changes reach nobody only where it may read.
        #expect(try root.request(#"{"op":"get","object":"secret/1","keyPath":"k"}"#).reply["value"] == "root's")
        _ = try root.request(#"{"op":"set","object":"secret/1","keyPath":"k","value":"changed"}"#)
        _ = try root.request(#"{"op":"set","object":"public/1","keyPath":"k","value":"news"}"#)
        let events = try nobody.linesBeforePing()
        #expect(events.count == 1, "\(events)")
        #expect(events.first?["object"] == "public/1")
        #expect(events.first?["new"] == "news")
        #expect(try root.request(#"{"op":"get","object":"shared/1","keyPath":"k"}"#).reply["value"] == "both")
    }

    @Test func writeOnlyGranteeLearnsWhetherItsChangeWasAppliedAndNothingOfTheValue() throws {
        let kvod = try startKVOD(policy: #"{"grants": [{"user": "nobody", "prefix": "drop/", "allow": ["write"]}]}"#)
        let root = try LineClient(path: kvod.socketPath)
        _ = try root.request(#"{"op":"set","object":"drop/box","value":{"list":[1,2,3],"text":"secret"}}"#)
        let nobody = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        // Each fails for a reason the stored value gives: an index past the
        // array's length, a kind, a key that is missing, an object that is.
        let failing = [
            #"{"op":"remove","object":"drop/box","keyPath":"list","index":3}"#,
            #"{"op":"replace","object":"drop/box","keyPath":"list","indexes":[0,7],"values":[0,0]}"#,
            #"{"op":"insert","object":"drop/box","keyPath":"list","index":4,"value":0}"#,
            #"{"op":"insert","object":"drop/box","keyPath":"text","value":0}"#,
            #"{"op":"remove","object":"drop/box","keyPath":"missing","index":0}"#,
            #"{"op":"set","object":"drop/box","keyPath":"text.inner","value":0}"#,
            #"{"op":"batch","ops":[{"op":"remove","object":"drop/box","keyPath":"list","index":9}]}"#,
        ]
        var errors: Set<JSONValue> = []
        for line in failing {
            let reply = try nobody.request(line)
            #expect(reply["error"]?["code"] == "forbidden", "\(line) → \(reply)")
            // A batch's error names its op, as every batch error does.
            guard case .object(var error)? = reply["error"], let message = error["message"]?.stringValue else { continue }
            error["index"] = nil
            error["message"] = .string(message.replacingOccurrences(of: "ops[0]: ", with: ""))
            errors.insert(.object(error))
        }
        #expect(errors.count == 1, "one and the same error whatever the reason: \(errors)")
        #expect(errors.first?["message"]?.stringValue?.contains("the change was not applied") == true)
        // A condition reads the value: refused, whether it would hold or not.
        for condition in [#""ifModSeq":1"#, #""ifValue":"secret""#, #""ifValue":"guess""#] {
            let reply = try nobody.request(#"{"op":"set","object":"drop/box","keyPath":"text","value":"x",\#(condition)}"#)
            #expect(reply["error"]?["code"] == "forbidden", "\(condition) → \(reply)")
        }
        // What it may do is done; the value is otherwise as root left it.
        #expect(try nobody.request(#"{"op":"remove","object":"drop/box","keyPath":"list","index":0}"#)["ok"] == true)
        #expect(try root.request(#"{"op":"get","object":"drop/box"}"#).reply["value"]
            == ["list": [2, 3], "text": "secret"])
        // Root, who may read, is told why.
        let precise = try root.request(#"{"op":"remove","object":"drop/box","keyPath":"list","index":3}"#).reply
        #expect(precise["error"]?["code"] == "index_out_of_range")
    }

    @Test func supplementaryGroupOfTheClientProcessCounts() throws {
        let kvod = try startKVOD(policy: Self.policy)
        let member = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup",
                                       supplementaryGroups: ["users"])
        #expect(try member.request(#"{"op":"set","object":"team/1","keyPath":"k","value":1}"#)["ok"] == true)
        let outsider = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        #expect(try outsider.request(#"{"op":"set","object":"team/1","keyPath":"k","value":2}"#)["error"]?["code"] == "forbidden")
    }

    @Test func withoutPolicyAnotherUserMayEverything() throws {
        let kvod = try startKVOD(policy: nil)
        let nobody = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        #expect(try nobody.request(#"{"op":"set","object":"secret/1","keyPath":"k","value":1}"#)["ok"] == true)
        let root = try LineClient(path: kvod.socketPath)
        #expect(try root.request(#"{"op":"get","object":"secret/1","keyPath":"k"}"#).reply["value"] == 1)
        #expect(kvod.stderrText().contains("no --policy: every client that can open the socket may read and write everything"))
    }

    @Test func policyFileThatIsWrongStopsKvodWithTheReason() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/policy.json"
        try #"{"grants": [{"user": "nobody", "prefix": "", "allow": ["observe"]}]}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        let kvod = try CommandRun.run(KVODProcess.binaryURL, ["--socket", directory + "/kvod.sock", "--policy", path])
        #expect(kvod.status == 1)
        #expect(kvod.stderr.contains("grant 1: \"allow\": unknown right \"observe\""), "\(kvod.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/kvod.sock"))
    }
}
