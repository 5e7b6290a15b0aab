@testable import KVOEtcd
import KVOTestSupport
import Testing

/// KVOEtcd's watch stream and leases against a real 3-member etcd cluster.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct EtcdWatchTests {
    @Test func watchFromAPastRevisionSeesEveryPutAndDeleteInOrderWithPrevKVsAndRevisions() async throws {
        let cluster = try await EtcdCluster()
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let first = try await session.put("/kvod/a", "1")
        _ = try await session.put("/kvod/a", "2")
        _ = try await session.put("/kvod/b", "1")
        _ = try await session.put("/other/c", "not watched")
        let deleted = try await session.call("delete") { session.client.delete(EtcdDeleteRequest(.key("/kvod/a")), $0) }
        #expect(deleted.deleted == 1)
        let log = WatchLog()
        let watch = session.client.watch(EtcdWatchRequest(.prefix("/kvod/"), startRevision: first), log.record)
        try await session.turn(until: "the watch replays four events") { log.events.count >= 4 }
        // A change made while the watch is open arrives after the replayed ones.
        let live = try await session.put("/kvod/b", "2")
        try await session.turn(until: "the watch sees the live put") { log.events.count >= 5 }
        let events = log.events
        #expect(events.map(\.kind) == [.put, .put, .put, .delete, .put])
        #expect(events.map(\.kv.keyText) == ["/kvod/a", "/kvod/a", "/kvod/b", "/kvod/a", "/kvod/b"])
        #expect(events.map(\.kv.modRevision) == [first, first + 1, first + 2, deleted.header.revision, live])
        #expect(events.map { $0.prevKV?.valueText } == [nil, "1", nil, "2", "1"])
        #expect(events.map(\.kv.valueText) == ["1", "2", "1", "", "2"])
        if case .created? = log.updates.first {} else { Issue.record("the first update is not created: \(log.updates)") }
        #expect(watch.lastRevision == live && !watch.isFinished)
        watch.cancel()
        _ = try await session.put("/kvod/b", "3")
        #expect(log.events.count == 5 && session.client.activeTransfers == 0, "a cancelled watch reports nothing more")
    }

    @Test func watchFromACompactedRevisionIsReportedAsCompactionWithTheCompactRevision() async throws {
        let cluster = try await EtcdCluster()
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let first = try await session.put("/kvod/x", "1")
        _ = try await session.put("/kvod/x", "2")
        let last = try await session.put("/kvod/x", "3")
        _ = try await session.call("compaction") { session.client.compact(revision: last, $0) }
        let log = WatchLog()
        let watch = session.client.watch(EtcdWatchRequest(.prefix("/kvod/"), startRevision: first), log.record)
        try await session.turn(until: "the watch ends") { watch.isFinished }
        #expect(log.updates.last == .compacted(compactRevision: last), "\(log.updates)")
        #expect(log.events.isEmpty)
        // From the compact revision on, the history is whole again.
        let resumed = WatchLog()
        _ = session.client.watch(EtcdWatchRequest(.prefix("/kvod/"), startRevision: last), resumed.record)
        try await session.turn(until: "the watch from the compact revision sees its event") { resumed.events.count == 1 }
        #expect(resumed.events.first?.kv.modRevision == last)
    }

    @Test func revokingALeaseDeletesItsKeysInOneRevisionAndTheWatchSeesTheDeletions() async throws {
        let cluster = try await EtcdCluster()
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let lease = try await session.call("lease grant") { session.client.grantLease(ttl: 60, $0) }
        #expect(lease.id != 0 && lease.ttl == 60)
        _ = try await session.put("/kvod/eph/1", "a", lease: lease.id)
        let second = try await session.put("/kvod/eph/2", "b", lease: lease.id)
        _ = try await session.put("/kvod/kept", "c")
        let renewed = try await session.call("keepalive") { session.client.keepAlive(lease: lease.id, $0) }
        #expect(renewed.id == lease.id && renewed.ttl > 0)
        let log = WatchLog()
        _ = session.client.watch(EtcdWatchRequest(.prefix("/kvod/"), startRevision: second + 2), log.record)
        try await session.turn(until: "the watch is created") { !log.updates.isEmpty }
        let revoked = try await session.call("lease revoke") { session.client.revokeLease(lease.id, $0) }
        try await session.turn(until: "the watch sees two deletions") { log.events.count >= 2 }
        #expect(log.events.map(\.kind) == [.delete, .delete])
        #expect(log.events.map(\.kv.keyText) == ["/kvod/eph/1", "/kvod/eph/2"])
        #expect(log.events.allSatisfy { $0.kv.modRevision == revoked.revision }, "one revision for both")
        #expect(log.events.map { $0.prevKV?.lease } == [lease.id, lease.id])
        let left = try await session.call("range") { session.client.range(EtcdRangeRequest(.prefix("/kvod/")), $0) }
        #expect(left.kvs.map(\.keyText) == ["/kvod/kept"])
        let after = try await session.call("keepalive of the revoked lease") { session.client.keepAlive(lease: lease.id, $0) }
        #expect(after.ttl <= 0)
    }

    @Test func watchOnAMemberThatLosesItsLeaderEndsWithNoLeaderInsteadOfStayingSilent() async throws {
        let cluster = try await EtcdCluster()
        let session = try EtcdSession(endpoints: [cluster.clientURLs[0]])
        let log = WatchLog()
        let before = try await session.put("/kvod/before", "1")
        let watch = session.client.watch(EtcdWatchRequest(.prefix("/kvod/")), log.record)
        try await session.turn(until: "the watch is created") { !log.updates.isEmpty }
        #expect(watch.lastRevision == before, "a watch from now resumes after the revision it was created at")
        // Without the two others, member 0 has no quorum and, after an election timeout, no leader.
        try await cluster.kill(member: 1)
        try await cluster.kill(member: 2)
        try await session.turn(until: "the watch ends", timeout: 30) { watch.isFinished }
        guard case .ended(.server(let code, let message))? = log.updates.last else {
            Issue.record("the watch did not end with etcd's refusal: \(log.updates)")
            return
        }
        #expect(code == EtcdError.unavailableCode && message.contains("no leader"), "\(code) \(message)")
    }

    @Test func idleWatchGetsProgressNotificationsAtTheCurrentRevisionThatDoNotMoveItsResumePoint() async throws {
        let cluster = try await EtcdCluster(arguments: ["--experimental-watch-progress-notify-interval", "500ms"])
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let first = try await session.put("/kvod/p", "1")
        let current = try await session.put("/other/q", "outside the watch")
        let log = WatchLog()
        let watch = session.client.watch(EtcdWatchRequest(.prefix("/kvod/"), startRevision: first), log.record)
        try await session.turn(until: "a progress notification arrives", timeout: 20) {
            log.updates.contains { if case .progress = $0 { true } else { false } }
        }
        let progress = log.updates.compactMap { update -> Int64? in
            if case .progress(let revision) = update { return revision }
            return nil
        }
        #expect(progress.allSatisfy { $0 == current }, "\(progress)")
        #expect(log.events.map(\.kv.modRevision) == [first] && watch.lastRevision == first)
    }

    @Test func aResponseEtcdSplitsIntoFragmentsIsReportedWholeInOneUpdate() async throws {
        // etcd fragments a watch response past --max-request-bytes plus 512 KiB of gRPC
        // overhead; a watch catching up from history gets up to 1,000 revisions in one
        // response: 700 puts of 950 bytes (each under the 1 KiB request limit) make one
        // response of about 680 KB.
        let cluster = try await EtcdCluster(arguments: ["--max-request-bytes", "1024"])
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let value = String(repeating: "v", count: 950)
        let first = try await session.put("/kvod/f0", value)
        for index in 1..<700 { _ = try await session.put("/kvod/f\(index)", value) }
        let log = WatchLog()
        let watch = session.client.watch(EtcdWatchRequest(.prefix("/kvod/"), startRevision: first, prevKV: false),
                                         log.record)
        try await session.turn(until: "the watch sees 700 events", timeout: 30) { log.events.count >= 700 }
        #expect(watch.messagesReceived > 2, "etcd fragmented the response (\(watch.messagesReceived) messages)")
        let updates = log.updates.filter { if case .events = $0 { true } else { false } }
        #expect(updates.count == 1, "\(updates.count) updates")
        #expect(log.events.map(\.kv.modRevision) == Array(first..<first + 700))
        #expect(log.events.allSatisfy { $0.kv.value.count == 950 })
    }
}
