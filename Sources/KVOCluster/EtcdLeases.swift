#if canImport(Glibc)
import Glibc
#endif
import KVOEngine
import KVOEtcd
import KVOValues
import Logging

/// The etcd leases behind values with a lifetime (docs/CLUSTER.md): one per
/// connection that owns ephemeral values, renewed while it is open
/// (`--etcd-lease-ttl`) and revoked when it closes, so that a kvod that dies
/// lets them expire; one per `ttl` set, left to expire at the deadline. Adds
/// to a change's `Txn` the puts and deletes of the leased keys
/// (``ClusterKeys/leased(_:_:_:)``). Loop-confined.
final class EtcdLeases {
    let client: any ClusterBackend
    let keys: ClusterKeys
    /// Seconds a connection's lease lives without renewal: how long the
    /// ephemeral values of a kvod that died outlive it.
    let connectionTTL: Int64
    /// This kvod's host name, put in each record and leased key.
    let host = EtcdLeases.hostName()
    private let logger: Logger

    private enum ConnectionLease {
        case granting([(Result<Int64, LeaseFailure>) -> Void])
        case granted(Int64)
    }

    /// The lease of each connection (``ClientController/id``) that set an ephemeral value.
    private var connections: [Int: ConnectionLease] = [:]
    /// Connections that closed while their lease was being granted: it is revoked once granted.
    private var closedWhileGranting: Set<Int> = []
    /// Leases whose revoke is on its way: sent again, and waited for, if kvod stops meanwhile.
    private var revoking: Set<Int64> = []
    private var renewal: (any ClusterTimer)?

    /// The leased keys' operations of one change (or batch), with the `ttl`
    /// leases granted for it: one per set with a `ttl`.
    struct Operations {
        var operations: [EtcdRequestOp] = []
        var ttlLeases: [Int64] = []
        /// When each of those ends (``TTLLease/expires``), in the same order.
        var expires: [Double] = []
    }

    /// A ttl's lease as granted: its id, and when it ends (wall clock,
    /// seconds since 1970: the grant's answer plus the ttl etcd granted,
    /// which may be longer than asked, never shorter).
    struct TTLLease {
        var id: Int64
        var expires: Double

        init(_ lease: EtcdLease) {
            id = lease.id
            expires = ((wallClockNow() + Double(lease.ttl)) * 1000).rounded(.up) / 1000
        }

        init(id: Int64, expires: Double) {
            self.id = id
            self.expires = expires
        }

        /// Stands for a lease not granted yet, in a `Txn` measured against etcd's
        /// limits: as large as a real one (the largest id, a deadline as long).
        static let placeholder = TTLLease(id: .max, expires: 9_999_999_999.999)
    }

    init(client: any ClusterBackend, keys: ClusterKeys, connectionTTL: Int64, loop: any ClusterLoop, logger: Logger) {
        self.client = client
        self.keys = keys
        self.connectionTTL = connectionTTL
        self.logger = logger
        // Renewed three times per ttl: one lost renewal does not end the lease.
        let period = UInt64(connectionTTL) * 1000 / 3
        renewal = loop.makeTimer()
        renewal?.start(afterMilliseconds: period, repeatMilliseconds: period) { [weak self] in self?.renew() }
    }

    // MARK: Leased keys

    /// The leased keys that lease `path` of `object`: on the connection's
    /// lease (ephemeral), on the ttl's lease, and the note beside them
    /// (none without a lease). A ttl key answers the key it replaces, whose
    /// lease is then revoked (``settled(_:_:)``).
    func leasedPuts(_ object: String, _ path: [String], uid: UInt32?, ephemeralLease: Int64?,
                    ttlLease: TTLLease?) -> [EtcdPutRequest] {
        var puts: [(ClusterKeys.Family, Int64)] = []
        if let ephemeralLease { puts.append((.ephemeral, ephemeralLease)) }
        if let ttlLease { puts.append((.ttl, ttlLease.id)) }
        if !puts.isEmpty { puts.append((.note, 0)) }
        let cause: ChangeCause = ephemeralLease != nil ? .disconnect : .ttl
        return puts.map { family, lease in
            let value = LeasedValue(object: object, path: path, cause: family == .ttl ? .ttl : cause, uid: uid,
                                    host: host, expires: ttlLease?.expires)
            return EtcdPutRequest(key: Array(keys.leased(family, object, path).utf8), value: value.json.jsonBytes,
                                  lease: lease, prevKV: family == .ttl)
        }
    }

    /// After the change's `Txn`: a `ttl` lease it no longer needs is revoked
    /// (the change lost its race, or replaced or deleted a value leased so),
    /// so leases do not pile up in etcd until their deadlines.
    func settled(_ operations: Operations, _ response: EtcdTxnResponse?) {
        guard let response, response.succeeded else {
            for lease in operations.ttlLeases { revoke(lease) }
            return
        }
        var replaced: [EtcdKeyValue] = []
        for answer in response.responses {
            switch answer {
            case .put(let put): if let kv = put.prevKV { replaced.append(kv) }
            case .delete(let delete): replaced += delete.prevKVs
            case .range: break
            }
        }
        for kv in replaced where kv.lease != 0 && !operations.ttlLeases.contains(kv.lease) && keys.isLeased(kv.key) {
            revoke(kv.lease)
        }
    }

    // MARK: Connections' leases

    func connectionLease(_ owner: Int, _ done: @escaping (Result<Int64, LeaseFailure>) -> Void) {
        switch connections[owner] {
        case .granted(let lease)?:
            done(.success(lease))
        case .granting(var waiting)?:
            waiting.append(done)
            connections[owner] = .granting(waiting)
        case nil:
            connections[owner] = .granting([done])
            client.grantLease(ttl: connectionTTL) { [weak self] result in
                guard let self, case .granting(let waiting)? = connections.removeValue(forKey: owner) else { return }
                var outcome = result.map(\.id).mapError { LeaseFailure("etcd did not grant the connection's lease: \($0)") }
                if case .success(let lease) = outcome {
                    if closedWhileGranting.remove(owner) != nil {
                        revoke(lease)
                        outcome = .failure(LeaseFailure("the connection closed"))
                    } else {
                        connections[owner] = .granted(lease)
                    }
                }
                for done in waiting { done(outcome) }
            }
        }
    }

    /// The connection `owner` closed: its lease is revoked, and etcd deletes
    /// its leased keys in one revision, which every kvod turns into deletions.
    func clientClosed(_ owner: Int) {
        switch connections.removeValue(forKey: owner) {
        case .granted(let lease)?: revoke(lease)
        case .granting(let waiting)?:
            connections[owner] = .granting(waiting)
            closedWhileGranting.insert(owner)
        case nil: break
        }
    }

    private func renew() {
        for case (let owner, .granted(let lease)) in connections {
            client.keepAlive(lease: lease) { [weak self] result in
                guard let self, case .success(let renewed) = result, renewed.ttl <= 0 else { return }
                // Expired meanwhile (etcd out of reach too long): its values are gone; the next set leases anew.
                logger.warning("the etcd lease of connection \(owner) expired; its ephemeral values were deleted")
                if case .granted(lease)? = connections[owner] { connections[owner] = nil }
            }
        }
    }

    func revoke(_ lease: Int64) {
        revoking.insert(lease)
        client.revokeLease(lease) { [weak self] result in
            self?.revoking.remove(lease)
            if case .failure(let error) = result {
                self?.logger.notice("could not revoke etcd lease \(lease) (it expires on its own): \(error)")
            }
        }
    }

    /// kvod stops: the revokes of the connections it closed are on their way
    /// through the loop's client, which stops with it. The backend sends them
    /// again and waits for them (``ClusterBackend/revokeWhileClosing(_:)``), so
    /// that those values go now on every host rather than when their leases expire.
    func close() {
        renewal?.close()
        renewal = nil
        guard !revoking.isEmpty else { return }
        client.revokeWhileClosing(revoking)
        revoking = []
    }

    /// Why a change's leases could not be had; nothing was changed.
    struct LeaseFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
