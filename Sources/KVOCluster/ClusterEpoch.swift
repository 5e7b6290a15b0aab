import KVOEngine
import KVOEtcd

/// The epoch every kvod over one cluster and prefix shares (docs/CLUSTER.md):
/// derived from a UUID that the first kvod writes at `<prefix>meta/epoch`,
/// together with etcd's cluster id. The UUID is made once per prefix, so a
/// prefix started afresh, or whose key was deleted (as after a restore from
/// backup), gets another epoch, and resume points of the old one are `compacted`.
public struct ClusterEpoch: Equatable, Sendable {
    /// The value of the epoch key.
    public var uuid: String
    /// etcd's cluster id, which the epoch mixes in: the same prefix on another cluster is another epoch.
    public var clusterID: UInt64
    /// The revision the key last changed at, as this kvod knows it: an older
    /// read of it is not taken over a newer one.
    public var revision: Int64

    /// The epoch of the key `uuid` of cluster `clusterID`, as read at `revision`.
    public init(uuid: String, clusterID: UInt64, revision: Int64) {
        self.uuid = uuid
        self.clusterID = clusterID
        self.revision = revision
    }

    /// As `observe` and `info` tell it: FNV-1a (64 bits) of the UUID and the
    /// cluster id, 16 hex digits, the length of a local-mode epoch.
    public var text: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for byte in uuid.utf8 { mix(byte) }
        for shift in stride(from: 56, through: 0, by: -8) { mix(UInt8(truncatingIfNeeded: clusterID >> UInt64(shift))) }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A random (version 4) UUID, in its usual text form.
    public static func newUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = (generator.next() as UInt64) & ~0xf000 | 0x4000
        let low = (generator.next() as UInt64) & ~(0xc << 60) | (0x8 << 60)
        let hex = [high, low].map { value in
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
        let cuts = [8, 12, 16, 20].map { hex.index(hex.startIndex, offsetBy: $0) }
        return [hex[..<cuts[0]], hex[cuts[0]..<cuts[1]], hex[cuts[1]..<cuts[2]], hex[cuts[2]..<cuts[3]],
                hex[cuts[3]...]].joined(separator: "-")
    }

    /// Writes `uuid` at the epoch key only if the key does not exist (its
    /// version is 0), and reads the key otherwise: one `Txn`, so of kvods
    /// racing to make it one wins and the others read the winner's.
    public static func creation(_ keys: ClusterKeys, uuid: String) -> EtcdTxnRequest {
        EtcdTxnRequest(compare: [EtcdCompare(.key(keys.epoch), .version(0))],
                       success: [.put(EtcdPutRequest(key: Array(keys.epoch.utf8), value: Array(uuid.utf8)))],
                       failure: [.range(EtcdRangeRequest(.key(keys.epoch)))])
    }

    /// The epoch a ``creation(_:uuid:)`` settled on: `proposed` if it won, the
    /// key's value otherwise; nil when the answer holds neither.
    public init?(_ response: EtcdTxnResponse, proposed: String) {
        clusterID = response.header.clusterID
        if response.succeeded {
            uuid = proposed
            revision = response.header.revision
            return
        }
        guard case .range(let range)? = response.responses.first, let kv = range.kvs.first, !kv.value.isEmpty else {
            return nil
        }
        uuid = kv.valueText
        revision = kv.modRevision
    }
}

extension ClusterKeys {
    /// Where the cluster's epoch UUID lies: outside the objects' and records' keys, so its
    /// changes are never taken for an object's.
    public var epoch: String { prefix + "meta/epoch" }
}
