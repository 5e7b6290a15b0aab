import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `kvod --etcd` (docs/CLUSTER.md): three kvods over a real 3-member etcd
/// cluster, each on its own member, as three hosts would run them.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterDaemonTests {
    @Test func setsOnEveryKvodReachEveryObserverOnEveryKvodAsOneStreamWithTheSameSeqs() async throws {
        let cluster = try await EtcdCluster()
        var kvods: [KVODProcess] = []
        for url in cluster.clientURLs { kvods.append(try await KVODProcess(arguments: ["--etcd", url])) }
        try Self.checkOneStream(kvods.map(\.socketPath))
    }

    @Test func aKvodCutOffFromItsMemberRefusesChangesAnswersStaleAndCatchesUpGapFreeWhenItIsBack() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        let (observer, missed) = try Self.writeWhileCutOff(a.socketPath, b.socketPath, memberURL: cluster.clientURLs[1]) {
            try Self.blocking {
                try await cluster.kill(member: 1)
                // Had it led, the two others elect a leader first.
                try await cluster.waitUntilHealthy([cluster.clientURLs[0], cluster.clientURLs[2]])
            }
        }
        try await cluster.restart(member: 1)
        try Self.checkCaughtUp(observer, b.socketPath, missed: missed)
    }

    @Test func aKvodWhoseMissedRevisionsWereCompactedGivesItsObserversTheCurrentValues() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        let observer = try Self.observeFirstValue(writer: a.socketPath, observer: b.socketPath)
        try await cluster.kill(member: 1)
        try await cluster.waitUntilHealthy([cluster.clientURLs[0], cluster.clientURLs[2]])
        // The epoch key is made anew among the revisions B misses.
        let oldEpoch = try Self.info(a.socketPath)["epoch"]
        _ = try await Self.etcdctl(cluster, ["del", "/kvod/meta/epoch"])
        try await waitUntil("a has a new epoch", timeout: 20, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.info(a.socketPath)["epoch"] != oldEpoch
        }
        let last = try Self.setValues(1...3, through: a.socketPath)
        let compaction = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, [
            "--endpoints", cluster.clientURLs[0], "compact", String(last),
        ], environment: ["ETCDCTL_API": "3"], timeout: 10)
        #expect(compaction.status == 0, "\(compaction.stderr)")
        try await cluster.restart(member: 1)
        try Self.checkResynced(observer, b.socketPath, value: 3, atLeast: last)
        let newEpoch = try Self.info(a.socketPath)["epoch"]
        try await waitUntil("b takes a's new epoch", timeout: 20, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.info(b.socketPath)["epoch"] == newEpoch
        }
    }

    @Test func aChangeSentTheMomentAKvodListensIsAppliedNotRefused() async throws {
        let cluster = try await EtcdCluster(size: 1)
        for round in 0..<5 {
            let kvod = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]], waitForSocket: false)
            let (reply, value) = try Self.setAndGet(round, through: kvod.socketPath)
            #expect(reply["ok"] == true, "the first set after kvod listens: \(reply)")
            #expect(value == round)
        }
    }

    /// A set on the first connection kvod accepts, then a get of it.
    private static func setAndGet(_ value: Int, through socket: String) throws -> (reply: JSONValue, value: Int?) {
        var connected: LineClient?
        try waitUntil("kvod accepts a connection", timeout: 20, recheckEvery: 0.0002) {
            connected = try? LineClient(path: socket)
            return connected != nil
        }
        let client = connected!
        let reply = try client.request(#"{"op":"set","object":"first","keyPath":"round","value":\#(value)}"#).reply
        return (reply, try client.request(#"{"op":"get","object":"first","keyPath":"round"}"#).reply["value"]?.intValue)
    }

    @Test func collectionChangesOnOneKvodReachAnotherKvodsObserversAsLocalModeWouldTellThem() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let local = try await KVODProcess()
        let overEtcd = try Self.eventsOfCollectionChanges(writer: a.socketPath, observer: b.socketPath)
        let inLocalMode = try Self.eventsOfCollectionChanges(writer: local.socketPath, observer: local.socketPath)
        #expect(overEtcd.map(\.kind) == ["insertion", "replacement", "removal", "setting", "setting", "setting"])
        #expect(overEtcd == inLocalMode)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Three writers (one per kvod) race on one object, pipelining their sets;
    /// an observer on each kvod must see every change once, in one order.
    private static func checkOneStream(_ sockets: [String]) throws {
        let observers = try sockets.map { try LineClient(path: $0) }
        for observer in observers {
            let reply = try observer.request(#"{"op":"observe","object":"o","keyPaths":["k","n"],"options":["new","old"]}"#).reply
            #expect(reply["ok"] == true, "\(reply)")
        }
        let writers = try sockets.map { try LineClient(path: $0) }
        let perWriter = 20
        for (index, writer) in writers.enumerated() {
            let lines = (0..<perWriter).map { n in
                n == 10 ? #"{"op":"delete","object":"o","keyPath":"k"}"#
                    : #"{"op":"set","object":"o","keyPath":"\#(n % 2 == 0 ? "k" : "n")","value":"w\#(index)-\#(n)"}"#
            }
            try writer.write(Array(lines.map { $0 + "\n" }.joined().utf8))
        }
        var seqs: [Int] = []
        for writer in writers {
            for _ in 0..<perWriter {
                let reply = try writer.readJSON(timeout: 30)
                #expect(reply["ok"] == true, "\(reply)")
                if let seq = reply["seq"]?.intValue { seqs.append(seq) }
            }
        }
        // Read-your-writes: the writer's kvod has applied its last change when it replies.
        let last = try writers[0].request(#"{"op":"get","object":"o","keyPath":"n"}"#).reply
        #expect(last["seq"]?.intValue ?? 0 >= seqs[perWriter - 1])
        // A delete that finds nothing answers the current seq, and a connection's pipelined changes may
        // share a revision (docs/CLUSTER.md): the distinct seqs are the revisions that changed something.
        let changes = Set(seqs)
        let end = try writers[0].request(#"{"op":"set","object":"o","keyPath":"n","value":"end"}"#).reply
        var streams: [[String]] = []
        for observer in observers {
            var events: [JSONValue] = []
            while events.count <= seqs.count, events.last?["new"] != "end" { events.append(try observer.readJSON(timeout: 30)) }
            let eventSeqs = events.compactMap { $0["seq"]?.intValue }
            #expect(Set(eventSeqs.dropLast()) == changes, "no revision missing")
            let sets = events.dropLast().filter { $0["new"] != nil }.compactMap { $0["new"]?.stringValue }
            #expect(sets.count == 3 * (perWriter - 1) && Set(sets).count == sets.count, "every set told once: \(sets)")
            #expect(eventSeqs == eventSeqs.sorted(), "in seq order")
            #expect(events.last?["seq"] == end["seq"] && events.last?["new"] == "end", "nothing after the last change")
            streams.append(events.map { "\($0["seq"]!) \($0["keyPath"]!) \($0["kind"]!) \($0["old"] ?? .null) \($0["new"] ?? .null)" })
        }
        #expect(streams[0] == streams[1] && streams[1] == streams[2])
    }

    /// Observes on `b`, sets on `a`, cuts `b` off with `cut`, then: a set on
    /// `b` is `unavailable`, a get on `b` is stale, and sets on `a` go on.
    /// Returns `b`'s observer and the seqs it missed meanwhile.
    private static func writeWhileCutOff(_ a: String, _ b: String, memberURL: String,
                                         cut: () throws -> Void) throws -> (LineClient, [Int]) {
        let observer = try LineClient(path: b)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        let writerA = try LineClient(path: a), writerB = try LineClient(path: b)
        let first = try writerA.request(#"{"op":"set","object":"o","keyPath":"k","value":0}"#).reply
        let seen = try observer.readJSON(timeout: 30)
        #expect(seen["seq"] == first["seq"] && seen["new"] == 0)
        #expect(try writerB.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == nil)
        let following = try info(b)["cluster"]
        #expect(following?["endpoints"] == [.string(memberURL)] && following?["endpoint"] == .string(memberURL))
        #expect(following?["leader"] == true && following?["stale"] == false && following?["error"] == nil, "\(following ?? .null)")
        #expect(following?["appliedRevision"] == first["seq"] && following?["lag"] == 0, "\(following ?? .null)")
        try cut()
        try waitUntil("b's reads are stale", timeout: 20) {
            try writerB.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == true
        }
        let refused = try writerB.request(#"{"op":"set","object":"o","keyPath":"k","value":-1}"#).reply
        #expect(refused["error"]?["code"] == "unavailable", "\(refused)")
        #expect(refused["error"]?["message"]?.stringValue?.contains(memberURL) == true, "\(refused)")
        let listed = try writerB.request(#"{"op":"list","prefix":""}"#).reply
        #expect(listed["stale"] == true && listed["objects"] == ["o"])
        let cutOff = try info(b)["cluster"]
        #expect(cutOff?["leader"] == false && cutOff?["stale"] == true && cutOff?["appliedRevision"] == first["seq"])
        // The same state in the metrics (issue 34 item 8).
        let metrics = try PrometheusText(parsing: writerB.request(#"{"op":"metrics"}"#).reply["text"]?.stringValue ?? "")
        #expect(metrics.value("kvod_cluster_stale") == 1)
        // The refused set is b's one proposal, and a failure.
        #expect(metrics.value("kvod_cluster_commit_duration_seconds_count", ["outcome": "unavailable"]) == 1)
        #expect(metrics.value("kvod_cluster_commit_duration_seconds_count", ["outcome": "applied"]) == nil)
        #expect(metrics.value("kvod_cluster_applied_revision") == Double(first["seq"]?.intValue ?? -1))
        #expect(cutOff?["error"]?.stringValue?.contains(memberURL) == true, "\(cutOff ?? .null)")
        var missed: [Int] = []
        for value in 1...5 {
            // When b's member was etcd's leader, the others elect one first: until then a
            // set is `unavailable` (etcd's "no leader") and changes nothing, so it is sent again.
            var reply: JSONValue = .null
            try waitUntil("a's set of \(value) is applied", timeout: 30) {
                reply = try writerA.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#, timeout: 30).reply
                return reply["error"]?["code"] != "unavailable"
            }
            #expect(reply["ok"] == true, "\(reply)")
            missed.append(reply["seq"]?.intValue ?? -1)
        }
        return (observer, missed)
    }

    /// Once its member is back, `b`'s observer gets exactly the missed changes, in order, and `b` writes again.
    private static func checkCaughtUp(_ observer: LineClient, _ b: String, missed: [Int]) throws {
        var events: [JSONValue] = []
        for _ in missed { events.append(try observer.readJSON(timeout: 30)) }
        #expect(events.map { $0["seq"]?.intValue ?? -1 } == missed)
        #expect(events.map { $0["new"] } == [1, 2, 3, 4, 5])
        let writerB = try LineClient(path: b)
        try waitUntil("b's reads are no longer stale", timeout: 20) {
            try writerB.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == nil
        }
        let caughtUp = try info(b)["cluster"]
        #expect(caughtUp?["appliedRevision"]?.intValue == missed.last && caughtUp?["lag"] == 0
                    && caughtUp?["stale"] == false && caughtUp?["lastWatchResponseMs"] != nil, "\(caughtUp ?? .null)")
        let reply = try writerB.request(#"{"op":"set","object":"o","keyPath":"k","value":6}"#, timeout: 30).reply
        #expect(reply["ok"] == true, "\(reply)")
        let next = try observer.readJSON(timeout: 30)
        #expect(next["new"] == 6 && next["seq"] == reply["seq"], "nothing repeated before the new change")
    }

    private static func observeFirstValue(writer: String, observer: String) throws -> LineClient {
        let watcher = try LineClient(path: observer)
        _ = try watcher.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        _ = try setValues(0...0, through: writer)
        #expect(try watcher.readJSON(timeout: 30)["new"] == 0)
        return watcher
    }

    /// Sets `o.k` to each value through `socket`; returns the last seq.
    private static func setValues(_ values: ClosedRange<Int>, through socket: String) throws -> Int {
        let client = try LineClient(path: socket)
        var seq = 0
        for value in values {
            let reply = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#, timeout: 30).reply
            #expect(reply["ok"] == true, "\(reply)")
            seq = reply["seq"]?.intValue ?? 0
        }
        return seq
    }

    /// The changes the observer missed are gone from etcd's history: it gets the current value, once.
    private static func checkResynced(_ observer: LineClient, _ socket: String, value: Int, atLeast seq: Int) throws {
        let event = try observer.readJSON(timeout: 30)
        #expect(event["new"]?.intValue == value && event["seq"]?.intValue ?? 0 >= seq, "\(event)")
        #expect(event["resync"] == true, "told as a resync over compacted history: \(event)")
        let client = try LineClient(path: socket)
        try waitUntil("the kvod follows etcd again", timeout: 20) {
            try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == nil
        }
        let reply = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(value + 1)}"#, timeout: 30).reply
        let next = try observer.readJSON(timeout: 30)
        #expect(next["new"]?.intValue == value + 1 && next["seq"] == reply["seq"], "nothing else came between: \(next)")
        #expect(next["resync"] == nil, "a change followed live is no resync: \(next)")
    }

    struct Told: Equatable {
        var keyPath: String, kind: String, indexes: JSONValue?, old: JSONValue?, new: JSONValue?
    }

    /// Observes `o` (prior events too) on `observer`, makes collection changes
    /// through `writer`, and returns what the observer was told, seqs aside.
    private static func eventsOfCollectionChanges(writer: String, observer: String) throws -> [Told] {
        let watcher = try LineClient(path: observer)
        _ = try watcher.request(#"{"op":"observe","object":"o","keyPaths":["list","doc.x"],"options":["new","old"]}"#)
        let client = try LineClient(path: writer)
        for line in [
            #"{"op":"insert","object":"o","keyPath":"list","values":[1,2,3]}"#,
            #"{"op":"replace","object":"o","keyPath":"list","index":1,"value":20}"#,
            #"{"op":"remove","object":"o","keyPath":"list","indexes":[0,2]}"#,
            #"{"op":"set","object":"o","keyPath":"doc","value":{"x":1}}"#,
            #"{"op":"delete","object":"o"}"#,
        ] {
            let reply = try client.request(line, timeout: 30).reply
            #expect(reply["ok"] == true, "\(line): \(reply)")
        }
        let told = try (0..<6).map { _ in
            let event = try watcher.readJSON(timeout: 30)
            return Told(keyPath: event["keyPath"]?.stringValue ?? "", kind: event["kind"]?.stringValue ?? "",
                        indexes: event["indexes"], old: event["old"], new: event["new"])
        }
        // The delete's two events, one per observation, come in an order of no meaning: by key path.
        return told.prefix(4) + told.suffix(2).sorted { $0.keyPath < $1.keyPath }
    }

    /// Runs async work from a blocking step.
    private static func blocking(_ work: @escaping @Sendable () async throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        Task(executorPreference: TestThreads.shared) {
            do { try await work() } catch { failure = error }
            done.signal()
        }
        done.wait()
        if let failure { throw failure }
    }
}
