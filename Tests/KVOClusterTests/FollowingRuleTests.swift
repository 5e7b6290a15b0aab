@testable import KVOCluster
import KVOEngine
import KVOValues
import KVOProtocol
import Testing

/// How the replica follows etcd when the connection, the history or the
/// watch fails it (docs/CLUSTER.md): never silently stale, never a change
/// lost on the way back. The real-etcd side is ClusterStaleTests,
/// ClusterPartitionTests, ClusterDaemonTests (compaction) and ClusterFreshnessTests.
@Suite struct FollowingRuleTests {
    /// Cut off, the replica says `stale` and refuses changes with nothing
    /// changed; back, its watch resumes from the revision after the last it
    /// applied, so what others wrote meanwhile arrives.
    @Test func aLostConnectionMakesTheReplicaStaleAndItsReturnBringsWhatOthersWroteMeanwhile() throws {
        let fixture = ReplicaFixture()
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","id":1,"object":"o","keyPath":"a","value":1}"#, from: client)
        #expect(fixture.replies(to: client).first?["ok"] == .bool(true))

        fixture.etcd.disconnect()
        fixture.loop.settle()
        #expect(fixture.replica.isStale)
        let before = fixture.etcd.revision
        fixture.send(#"{"op":"set","id":2,"object":"o","keyPath":"a","value":2}"#, from: client)
        let refused = try #require(fixture.replies(to: client).first)
        #expect(refused["ok"] == .bool(false) && fixture.etcd.revision == before, "\(refused)")
        fixture.writeElsewhere("p", #"{"x":7}"#)

        fixture.etcd.reconnect()
        fixture.loop.advance(by: EtcdReplica.resumeDelayMilliseconds)
        #expect(!fixture.replica.isStale && fixture.replica.appliedRevision == fixture.etcd.revision)
        #expect(fixture.value("p", "x") == .int(7), "the change made while cut off arrived")
        #expect(fixture.value("o", "a") == .int(1))
        fixture.send(#"{"op":"set","id":3,"object":"o","keyPath":"a","value":3}"#, from: client)
        #expect(fixture.replies(to: client).first?["ok"] == .bool(true))
    }

    /// Back after the history it missed was compacted, the replica reads the
    /// prefix whole and takes it (deletions included), then watches from there.
    @Test func aWatchFromACompactedRevisionReadsThePrefixAgainAndFollowsFromIt() throws {
        let fixture = ReplicaFixture()
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","id":1,"object":"o","keyPath":"a","value":1}"#, from: client)
        #expect(fixture.replies(to: client).first?["ok"] == .bool(true))

        fixture.etcd.disconnect()
        fixture.loop.settle()
        fixture.writeElsewhere("p", #"{"x":7}"#)
        fixture.etcd.delete(fixture.keys.document("o"))
        fixture.etcd.compact()
        fixture.etcd.reconnect()
        fixture.loop.advance(by: EtcdReplica.resumeDelayMilliseconds)

        #expect(fixture.log.contains("were compacted; reading the prefix again"))
        #expect(!fixture.replica.isStale && fixture.replica.appliedRevision == fixture.etcd.revision)
        #expect(fixture.value("p", "x") == .int(7) && !fixture.holds("o"))
        fixture.writeElsewhere("q", #"{"y":1}"#)
        fixture.loop.settle()
        #expect(fixture.value("q", "y") == .int(1), "followed from the snapshot on")
    }

    /// A watch that stops delivering (a hung member) while etcd moves on: the
    /// once-a-second probe finds this kvod's own committed change not
    /// delivered, gives the watch up and watches again from the next member.
    @Test func aWatchThatDeliversNothingWhileEtcdMovesOnIsGivenUpForTheNextMember() throws {
        let fixture = ReplicaFixture()
        let client = fixture.makeClient()
        let first = fixture.replica.info[InfoFigure.Cluster.endpoint]
        fixture.etcd.stallWatches()
        fixture.send(#"{"op":"set","id":1,"object":"o","keyPath":"a","value":1}"#, from: client)
        let committed = fixture.etcd.revision
        fixture.loop.advance(by: 2 * WatchLiveness.intervalMilliseconds)
        #expect(fixture.replies(to: client).isEmpty && !fixture.replica.isStale, "not given up after two probes")

        fixture.loop.advance(by: WatchLiveness.intervalMilliseconds + EtcdReplica.resumeDelayMilliseconds)
        #expect(fixture.log.contains("has not delivered this kvod's change at revision \(committed)"))
        let reply = try #require(fixture.replies(to: client).first)
        #expect(reply["ok"] == .bool(true) && reply["seq"] == .int(committed), "\(reply)")
        #expect(!fixture.replica.isStale && fixture.replica.info[InfoFigure.Cluster.endpoint] != first)
        #expect(fixture.value("o", "a") == .int(1))
    }
}
