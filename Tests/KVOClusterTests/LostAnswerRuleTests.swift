@testable import KVOCluster
import KVOEngine
import KVOValues
import Testing

/// Exactly once when etcd's answer is lost (docs/CLUSTER.md, "When etcd's
/// answer is lost"): the `Txn` was applied, its answer never came. The
/// replica sends the same `Txn` again; its compares let at most one of the
/// two apply, and the proposal id in the records the watch applies tells a
/// resend that lost to the first sending from a race lost to another writer.
/// The real-etcd side is ClusterLostAnswerTests.
@Suite struct LostAnswerRuleTests {
    @Test func anAddWhoseAnswerIsLostAfterTheWatchAppliedItIsAnsweredOkOnceAndNotSentAgain() throws {
        let fixture = ReplicaFixture()
        let client = fixture.makeClient()
        fixture.etcd.answersToLose = 1
        fixture.send(#"{"op":"add","id":1,"object":"o","keyPath":"n","by":1}"#, from: client)
        #expect(fixture.replies(to: client).isEmpty, "the outcome is not told before the replica finds it out")
        fixture.loop.advance(by: EtcdReplica.resumeDelayMilliseconds)
        let reply = try #require(fixture.replies(to: client).first)
        #expect(reply["ok"] == .bool(true) && reply["seq"] == .int(fixture.etcd.revision), "\(reply)")
        #expect(fixture.etcd.appliedTxns == 1, "found applied by its id: not sent again")
        #expect(fixture.value("o", "n") == .int(1))
        #expect(fixture.log.contains("the Txn whose answer was lost was applied at revision"))
    }

    /// The watch tells of the revision only after the `Txn` went again: the
    /// resend loses its compare to the first sending, and must not be taken
    /// for a lost race (the add computed again would add twice).
    @Test func aResendThatLosesItsCompareToTheFirstSendingIsAnsweredOkAndNotAppliedTwice() throws {
        let fixture = ReplicaFixture()
        let client = fixture.makeClient()
        fixture.etcd.answersToLose = 1
        fixture.etcd.holdWatchEvents()
        fixture.send(#"{"op":"add","id":1,"object":"o","keyPath":"n","by":1}"#, from: client)
        let applied = fixture.etcd.revision
        fixture.loop.advance(by: EtcdReplica.resumeDelayMilliseconds)
        #expect(fixture.log.contains("sending it again (1 of"))
        #expect(fixture.replies(to: client).isEmpty, "a lost compare waits for the watch to tell why")
        fixture.etcd.releaseWatchEvents()
        fixture.loop.advance(by: EtcdReplica.resumeDelayMilliseconds)
        let reply = try #require(fixture.replies(to: client).first)
        #expect(reply["ok"] == .bool(true) && reply["seq"] == .int(applied), "\(reply)")
        #expect(fixture.etcd.appliedTxns == 1 && fixture.etcd.revision == applied, "applied once")
        #expect(fixture.value("o", "n") == .int(1))
        #expect(fixture.log.contains("a Txn sent again lost its compare to an earlier sending"))
    }
}
