import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 13 against the real kvod over its socket: whole documents, prefix
/// observations, `list`, `changedKeyPath`, and their errors.
@Suite struct NamespaceTests {
    @Test func wholeDocumentObservationSeesSetsOfTheDocumentAndOfItsKeyPaths() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        let initial = try observer.request(#"{"op":"observe","object":"p","options":["new","initial"]}"#)
        #expect(initial.events.count == 1 && initial.events[0]["new"] == .null && initial.events[0]["keyPath"] == nil)
        _ = try writer.request(#"{"op":"set","object":"p","keyPath":"address.city","value":"Oslo"}"#)
        _ = try writer.request(#"{"id":1, "op": "set", "object": "p", "value": {"name": "x"}}"#)
        let refused = try writer.request(#"{"op":"set","object":"p","value":[1]}"#).reply
        #expect(refused["error"]?["code"] == "not_an_object")
        let first = try observer.readJSON()
        #expect(first["new"] == ["address": ["city": "Oslo"]] && first["changedKeyPath"] == "address.city")
        let second = try observer.readJSON()
        #expect(second["new"] == ["name": "x"] && second["changedKeyPath"] == nil && second["keyPath"] == nil)
        #expect(try writer.request(#"{"op":"get","object":"p"}"#).reply["value"] == ["name": "x"])
        let listed = try observer.request(#"{"op":"observations"}"#).reply["observations"]
        #expect(listed == [["object": "p", "options": ["new", "initial"], "policy": "coalesce",
                           "eventsSent": 3, "eventsCoalesced": 0, "lastSeqSent": 2]])
    }

    @Test func prefixObservationFollowsObjectsMadeLaterAndListShowsWhoIsThere() throws {
        let kvod = try KVODProcess()
        let writer = try LineClient(path: kvod.socketPath)
        _ = try writer.request(#"{"op":"set","object":"services/web","keyPath":"addr","value":"10.0.0.5:80"}"#)
        let watcher = try LineClient(path: kvod.socketPath)
        let start = try watcher.request(
            #"{"op":"observe","prefix":"services/","keyPath":"addr","options":["initial","new"]}"#)
        #expect(start.events.map { $0["object"] } == ["services/web"])
        #expect(start.events.first?["prefix"] == "services/" && start.events.first?["initial"] == true)
        _ = try writer.request(#"{"op":"set","object":"services/db","keyPath":"addr","value":"10.0.0.6:5432"}"#)
        _ = try writer.request(#"{"op":"set","object":"servicesX","keyPath":"addr","value":"no"}"#)
        _ = try writer.request(#"{"op":"delete","object":"services/web"}"#)
        let created = try watcher.readJSON()
        #expect(created["object"] == "services/db" && created["new"] == "10.0.0.6:5432")
        let gone = try watcher.readJSON()
        #expect(gone["object"] == "services/web" && gone["new"] == .null)
        let list = try writer.request(#"{"op":"list","prefix":"services/"}"#).reply
        #expect(list["objects"] == ["services/db"] && list["more"] == false && list["seq"] == 4)
        // Nothing else was sent to the watcher (servicesX is not under "services/").
        #expect(try watcher.request(#"{"op":"ping","id":"fence"}"#).events.isEmpty)
    }

    @Test func requestErrorsNameTheirFieldAndChangeNothing() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let both = try client.request(#"{"op":"observe","prefix":"a","object":"a/1","keyPath":"k"}"#).reply
        #expect(both["error"]?["code"] == "bad_request")
        let long = String(repeating: "p", count: 1025)
        #expect(try client.request(#"{"op":"observe","prefix":"\#(long)"}"#).reply["error"]?["code"] == "limit_exceeded")
        #expect(try client.request(#"{"op":"list","limit":10001}"#).reply["error"]?["code"] == "limit_exceeded")
        let badPath = try client.request(#"{"op":"observe","object":"o","keyPaths":["a","b..c"]}"#).reply
        #expect(badPath["error"]?["message"]?.stringValue?.contains("\"keyPaths[1]\"") == true, "\(badPath)")
        #expect(try client.request(#"{"op":"observations"}"#).reply["observations"] == [])
    }

    @Test func prefixObservationResumesWithSinceAcrossARestartWithDataDir() throws {
        let data = try DataDirectory()
        var resumeAt = 0
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            resumeAt = try client.request(#"{"op":"set","object":"jobs/1","keyPath":"state","value":"new"}"#)
                .reply["seq"]?.intValue ?? -1
            _ = try client.request(#"{"op":"set","object":"jobs/1","keyPath":"state","value":"running"}"#)
            _ = try client.request(#"{"op":"set","object":"other","keyPath":"state","value":"x"}"#)
            _ = try client.request(#"{"op":"set","object":"jobs/2","value":{"state":"new"}}"#)
            kvod.signal(SIGKILL)
            _ = try kvod.waitForExit()
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"delete","object":"jobs/1"}"#)
        let replay = try client.request(
            #"{"op":"observe","prefix":"jobs/","keyPath":"state","options":["new","old"],"since":\#(resumeAt)}"#)
        #expect(replay.events.map { $0["object"] } == ["jobs/1", "jobs/2", "jobs/1"])
        #expect(replay.events.map { $0["seq"] } == [2, 4, 5])
        #expect(replay.events.map { $0["new"] } == ["running", "new", .null])
        #expect(replay.events.map { $0["old"] } == ["new", .null, "running"])
        #expect(replay.events[1]["changedKeyPath"] == nil)
        #expect(try client.request(#"{"op":"get","object":"jobs/2"}"#).reply["value"] == ["state": "new"])
    }

    @Test(.onDedicatedThread) func slowPrefixObserverIsCoalescedPerObjectAndEndsAtEachLatestValue() throws {
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "1m", "--output-soft-limit", "256k",
                                               "--output-soft-seconds", "1"])
        let stuck = try LineClient(path: kvod.socketPath)
        _ = try stuck.request(#"{"op":"observe","prefix":"s/","keyPath":"k","options":["new"]}"#)
        let setter = try LineClient(path: kvod.socketPath)
        let objects = (0..<10).map { "s/\($0)" }
        let rounds = 2_000
        let padding = String(repeating: "x", count: 200)
        try setter.pipeline(count: rounds * objects.count) { index in
            #"{"op":"set","object":"\#(objects[index % objects.count])","keyPath":"k","value":{"n":\#(index),"pad":"\#(padding)"}}"#
        }
        try kvod.waitForLog(containing: "is not keeping up")
        var delivered: [String: Int] = [:]
        var folded: [String: Int] = [:]
        var latest: [String: Int] = [:]
        while delivered.values.reduce(0, +) + folded.values.reduce(0, +) < rounds * objects.count {
            let event = try stuck.readJSON()
            guard let object = event["object"]?.stringValue, let n = event["new"]?["n"]?.intValue else {
                Issue.record("not a change event: \(event)")
                return
            }
            #expect(n > latest[object, default: -1], "events of one object come in order")
            latest[object] = n
            delivered[object, default: 0] += 1
            folded[object, default: 0] += event["coalesced"]?.intValue ?? 0
        }
        #expect(folded.values.reduce(0, +) > 0)
        for (offset, object) in objects.enumerated() {
            #expect(delivered[object, default: 0] + folded[object, default: 0] == rounds)
            #expect(latest[object] == (rounds - 1) * objects.count + offset)
        }
    }
}

/// Issue 13's access rule with a second uid: a client never hears of an
/// object it may not read, through `list` or a prefix observation.
@Suite(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"), .onDedicatedThread)
struct NamespaceAccessControlTests {
    @Test func listAndPrefixObservationsLeaveOutObjectsTheClientMayNotRead() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let policy = directory + "/policy.json"
        try #"{"grants":[{"user":"nobody","prefix":"svc/public","allow":["read"]}]}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let kvod = try KVODProcess(arguments: ["--socket-mode", "0666", "--policy", policy])
        chmod(kvod.directory, 0o755)
        let root = try LineClient(path: kvod.socketPath)
        _ = try root.request(#"{"op":"set","object":"svc/public-a","keyPath":"k","value":1}"#)
        _ = try root.request(#"{"op":"set","object":"svc/secret","keyPath":"k","value":1}"#)
        let nobody = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        let listed = try nobody.request(#"{"op":"list","prefix":"svc/"}"#)
        #expect(listed["objects"] == ["svc/public-a"] && listed["more"] == false, "\(listed)")
        try nobody.send(#"{"op":"observe","id":1,"prefix":"svc/","keyPath":"k","options":["new","initial"]}"#)
        let initial = try nobody.readJSON()
        #expect(initial["object"] == "svc/public-a")
        #expect(try nobody.readJSON()["id"] == 1)
        _ = try root.request(#"{"op":"set","object":"svc/secret","keyPath":"k","value":2}"#)
        _ = try root.request(#"{"op":"set","object":"svc/public-b","keyPath":"k","value":3}"#)
        let seen = try nobody.linesBeforePing()
        #expect(seen.map { $0["object"] } == ["svc/public-b"], "\(seen)")
        let single = try nobody.request(#"{"op":"observe","id":2,"object":"svc/secret"}"#)
        #expect(single["error"]?["code"] == "forbidden")
    }
}
