@testable import KVOCluster
import KVOEngine
import Testing

/// The cluster's epoch (docs/CLUSTER.md): the UUID at `<prefix>meta/epoch`,
/// followed through the watch. A deleted key (a restore from backup, say) is
/// made again by a kvod, and every kvod takes the new epoch, so that resume
/// points of the old one are `compacted`.
@Suite struct EpochRuleTests {
    @Test func aDeletedEpochKeyIsMadeAgainAndTheEngineTakesTheNewEpoch() throws {
        let fixture = ReplicaFixture()
        let before = fixture.engine.epoch
        let uuid = try #require(fixture.etcd.value(fixture.keys.epoch))
        fixture.etcd.delete(fixture.keys.epoch)
        fixture.loop.settle()
        let remade = try #require(fixture.etcd.value(fixture.keys.epoch), "made again")
        #expect(remade != uuid)
        #expect(fixture.engine.epoch != before)
        #expect(fixture.engine.epoch == ClusterEpoch(uuid: remade, clusterID: MemoryEtcd.clusterID, revision: 0).text)
    }

    /// Another kvod wrote a new epoch: this one takes it, once.
    @Test func aNewEpochWrittenElsewhereIsTakenFromTheWatch() {
        let fixture = ReplicaFixture()
        fixture.etcd.put(fixture.keys.epoch, "7d9f3a10-0000-4000-8000-000000000002")
        fixture.loop.settle()
        let expected = ClusterEpoch(uuid: "7d9f3a10-0000-4000-8000-000000000002", clusterID: MemoryEtcd.clusterID,
                                    revision: 0).text
        #expect(fixture.engine.epoch == expected)
        #expect(fixture.log.contains("the cluster's epoch is now \(expected)"))
    }
}
