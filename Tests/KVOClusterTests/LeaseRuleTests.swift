@testable import KVOCluster
import KVOEngine
import KVOValues
import Testing

/// Values with a lifetime over etcd (docs/CLUSTER.md): each is leased in
/// etcd, and the end of its lease, whoever ended it, is turned into the
/// value's deletion by every kvod that sees the leased key go in its watch.
/// The real-etcd side is ClusterLifetimeTests and ClusterBatchLifetimeTests.
@Suite struct LeaseRuleTests {
    @Test func aClosedConnectionsLeaseIsRevokedAndItsEphemeralValueDeleted() throws {
        let fixture = ReplicaFixture()
        let owner = fixture.makeClient()
        fixture.send(#"{"op":"set","id":1,"object":"o","keyPath":"b","value":2}"#, from: owner)
        fixture.send(#"{"op":"set","id":2,"object":"o","keyPath":"a","value":1,"ephemeral":true}"#, from: owner)
        #expect(fixture.replies(to: owner).map { $0["ok"] } == [.bool(true), .bool(true)])
        let lease = try #require(fixture.etcd.liveLeases.first, "the connection's lease holds the value's key")
        fixture.close(owner)
        #expect(!fixture.etcd.liveLeases.contains(lease), "revoked when the connection closed")
        #expect(fixture.value("o", "a") == nil && fixture.value("o", "b") == .int(2), "the lease's end deleted the value")
        let stored = try #require(fixture.etcd.value(fixture.keys.document("o")))
        let document = try #require(ClusterKeys.stored(Array(stored.utf8))?.document)
        #expect(document["a"] == nil && document["b"] == .int(2), "deleted in etcd too: \(stored)")
    }

    /// The lease ends without this kvod (its ttl passed, another kvod
    /// revoked it): the watch's deletion of the leased key is enough.
    @Test func aLeaseThatEndsElsewhereDeletesItsValue() throws {
        let fixture = ReplicaFixture()
        let owner = fixture.makeClient()
        fixture.send(#"{"op":"set","id":1,"object":"o","keyPath":"a","value":1,"ttl":60}"#, from: owner)
        #expect(fixture.replies(to: owner).first?["ok"] == .bool(true))
        let lease = try #require(fixture.etcd.liveLeases.first)
        fixture.send(#"{"op":"set","id":2,"object":"o","keyPath":"b","value":2}"#, from: owner)
        fixture.etcd.expire(lease)
        fixture.loop.settle()
        #expect(fixture.value("o", "a") == nil && fixture.value("o", "b") == .int(2))
    }
}
