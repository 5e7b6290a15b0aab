import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Each kvoctl command and its exit status, against the real kvod.
@Suite struct CommandTests {
    @Test func setTakesJSONOrABareWordAndGetPrintsJSON() throws {
        let kvod = try KVODProcess()
        let first = try KVOCtl.run(kvod, ["set", "person/1", "name", "xsc"])
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first.stderr)")
        #expect(first.lines == ["1"], "set prints the seq")
        #expect(try KVOCtl.run(kvod, ["set", "person/1", "age", "42"]).lines == ["2"])
        #expect(try KVOCtl.run(kvod, ["set", "person/1", "zip", #""0150""#]).status == 0)
        #expect(try KVOCtl.run(kvod, ["set", "person/1", "address", #"{"city":"Oslo"}"#]).status == 0)
        #expect(try KVOCtl.run(kvod, ["set", "person/1", "motto", "hello world"]).status == 0)
        let whole = try KVOCtl.run(kvod, ["get", "person/1"])
        #expect(whole.status == 0)
        #expect(whole.lines == [
            #"{"name":"xsc","age":42,"zip":"0150","address":{"city":"Oslo"},"motto":"hello world"}"#,
        ])
        #expect(try KVOCtl.run(kvod, ["get", "person/1", "address.city"]).lines == [#""Oslo""#])
    }

    @Test func deleteInsertRemoveReplaceEditTheDocument() throws {
        let kvod = try KVODProcess()
        #expect(try KVOCtl.run(kvod, ["insert", "todo", "items", "a", "d"]).status == 0)
        #expect(try KVOCtl.run(kvod, ["insert", "todo", "items", "b", "c", "--index", "1"]).status == 0)
        #expect(try KVOCtl.run(kvod, ["remove", "todo", "items", "3", "0"]).status == 0)
        #expect(try KVOCtl.run(kvod, ["replace", "todo", "items", "1", #"{"x":1}"#]).status == 0)
        #expect(try KVOCtl.run(kvod, ["get", "todo", "items"]).lines == [#"["b",{"x":1}]"#])
        let deleted = try KVOCtl.run(kvod, ["delete", "todo", "items"])
        #expect(deleted.status == 0 && deleted.lines == ["5"])
        #expect(try KVOCtl.run(kvod, ["delete", "todo"]).status == 0)
        #expect(try KVOCtl.run(kvod, ["get", "todo"]).status == 8)
    }

    @Test func infoAndPingAnswer() throws {
        let kvod = try KVODProcess()
        let ping = try KVOCtl.run(kvod, ["ping"])
        #expect(ping.status == 0 && ping.lines == ["ok"])
        _ = try KVOCtl.run(kvod, ["set", "o", "k", "1"])
        let info = try KVOCtl.run(kvod, ["info"])
        #expect(info.status == 0)
        let fields = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        #expect(fields?["objects"] as? Int == 1)
        #expect(fields?["seq"] as? Int == 1)
        #expect(fields?["connections"] as? Int == 1)
        #expect(fields?["version"] is String)
    }

    @Test func daemonErrorExitsWithItsStatusAndTheDaemonsMessageOnStderr() throws {
        let kvod = try KVODProcess()
        _ = try KVOCtl.run(kvod, ["set", "person/1", "name", "xsc"])
        let missing = try KVOCtl.run(kvod, ["get", "person/1", "age"])
        #expect(missing.status == 8)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr == "kvoctl: not_found: person/1 has no value at age\n")
        let through = try KVOCtl.run(kvod, ["set", "person/1", "name.first", "x"])
        #expect(through.status == 1)
        #expect(through.stderr.contains("not_an_object"))
        #expect(try KVOCtl.run(kvod, ["get", "person/1", "a..b"]).status == 10)
    }

    @Test func usageErrorsExitTwoAndChangeNothing() throws {
        let kvod = try KVODProcess()
        let cases: [[String]] = [
            [], ["fly"], ["set", "o", "k"], ["set", "o", "k", "{broken"], ["insert", "o", "k"],
            ["remove", "o", "k", "x"], ["replace", "o", "k", "0"], ["observe"], ["set", "o", "[1]"],
            ["observe", "o", "k", "--count", "0"],
            ["get", "o", "--frobnicate"],
        ]
        for arguments in cases {
            let run = try KVOCtl.run(kvod, arguments)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(!run.stderr.isEmpty, "\(arguments)")
        }
        let info = try KVOCtl.run(kvod, ["info"]).stdout
        #expect(info.contains(#""objects":0"#) && info.contains(#""seq":0"#), "\(info)")
    }

    @Test func noDaemonExitsThree() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try KVOCtl.run(["ping", "--socket", directory + "/none.sock"])
        #expect(run.status == 3)
        #expect(run.stderr.contains("cannot_connect") && run.stderr.contains("none.sock"), "\(run.stderr)")
    }

    @Test func kvodSocketEnvironmentIsHonouredAndSocketOptionWins() throws {
        let kvod = try KVODProcess()
        let viaEnvironment = try KVOCtl.run(["set", "o", "k", "1"], environment: ["KVOD_SOCKET": kvod.socketPath])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")
        let overridden = try KVOCtl.run(["get", "o", "k", "--socket", kvod.socketPath],
                                        environment: ["KVOD_SOCKET": "/nonexistent/kvod.sock"])
        #expect(overridden.lines == ["1"])
        let wrong = try KVOCtl.run(["get", "o", "k"], environment: ["KVOD_SOCKET": "/nonexistent/kvod.sock"])
        #expect(wrong.status == 3)
    }

    @Test func rawSendsLinesAndPrintsRepliesAndEventsInOrder() throws {
        let kvod = try KVODProcess()
        let input = """
            {"op":"observe","id":1,"object":"a","keyPath":"b","options":["new"]}
            {"op":"set","id":2,"object":"a","keyPath":"b","value":1}

            {"op":"get","id":3,"object":"a","keyPath":"b"}

            """
        let run = try KVOCtl.run(kvod, ["raw"], stdin: input)
        #expect(run.status == 0, "\(run.stderr)")
        // The observe reply ends with the daemon's epoch, 16 random hex digits.
        #expect(run.lines.first?.hasPrefix(#"{"id":1,"ok":true,"seq":0,"epoch":""#) == true, "\(run.lines)")
        #expect(run.lines.dropFirst() == [
            #"{"event":"change","object":"a","keyPath":"b","kind":"setting","new":1,"seq":1}"#,
            #"{"id":2,"ok":true,"seq":1}"#,
            #"{"id":3,"ok":true,"value":1,"modSeq":1,"seq":1}"#,
        ])
    }

    @Test func rawExitsOneWhenAReplyIsAnError() throws {
        let kvod = try KVODProcess()
        let run = try KVOCtl.run(kvod, ["raw"], stdin: "not json\n{\"op\":\"ping\"}\n")
        #expect(run.status == 1)
        #expect(run.lines.count == 2)
        #expect(run.lines.first?.contains("bad_json") == true)
        #expect(run.lines.last == #"{"ok":true}"#)
    }

    @Test func kvoctlDoesNotLinkLibuvButKvodDoes() throws {
        let ldd = URL(fileURLWithPath: "/usr/bin/ldd")
        let kvoctl = try CommandRun.run(ldd, [KVOCtl.binaryURL.path])
        let kvod = try CommandRun.run(ldd, [KVODProcess.binaryURL.path])
        #expect(kvod.stdout.contains("libuv"), "the check can see libuv where it is linked")
        #expect(kvoctl.status == 0 && !kvoctl.stdout.contains("libuv"), "\(kvoctl.stdout)")
    }
}

/// kvoctl prints the deepest object kvod accepts (docs/PROTOCOL.md, "Nesting").
@Suite struct DocumentDepthCommandTests {
    @Test func getPrintsTheDeepestObject() throws {
        let kvod = try KVODProcess()
        let keys = Array(repeating: "k", count: 511).joined(separator: ".")
        #expect(try KVOCtl.run(kvod, ["set", "o", keys, "[1]"]).status == 0)
        let get = try KVOCtl.run(kvod, ["get", "o"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.lines.first?.hasSuffix("[1]" + String(repeating: "}", count: 511)) == true)
    }
}

/// kvoctl checks the default socket's owners; `KVOD_SOCKET` or `--socket` is the user's own choice.
@Suite(.enabled(if: getuid() == 0, "switching users needs root"))
struct DefaultSocketOwnershipCommandTests {
    @Test func defaultSocketInAnotherUsersDirectoryIsRefusedUnlessNamed() throws {
        let folder = try TemporaryDirectory()
        chmod(folder.path, 0o755)
        let kvod = try KVODProcess(arguments: ["--socket-mode", "0666"], socketPath: folder.path + "/kvod.sock")
        // As nobody, the default socket is $XDG_RUNTIME_DIR/kvod.sock: here, in root's folder.
        let asNobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", KVOCtl.binaryURL.path, "ping"]
        let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
        let refused = try CommandRun.run(setpriv, asNobody, environment: ["XDG_RUNTIME_DIR": folder.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("\(folder.path) belongs to uid 0"), "\(refused.stderr)")
        let named = try CommandRun.run(setpriv, asNobody, environment: ["KVOD_SOCKET": kvod.socketPath])
        #expect(named.status == 0, "\(named.stderr)")
        try kvod.terminate()
    }
}
