import KVOEngine
import KVOEtcd

/// The leased keys of a `batch` (docs/CLUSTER.md): its sets with `ephemeral`
/// or `ttl` put theirs as a single set does, in the batch's one `Txn`, and
/// its sets and deletes end the leased keys at and under their key paths.
/// etcd allows one write per key in a `Txn` and no put inside a deleted
/// range, so the batch's ops are folded first: what stays leased after the
/// last op is put, and the deleted ranges leave those keys out.
struct BatchLeasePlan {
    /// A value leased once the batch is applied.
    struct Leased {
        var object: String
        var path: [String]
        var lifetime: ValueLifetime
    }

    /// The values the batch leases that no later op of it ends, in op order.
    var leased: [Leased] = []
    /// The key paths whose leased keys (at and under them) the batch ends,
    /// in the objects that held leased values before it.
    var ended: [(object: String, path: [String])] = []
    /// Who sent the batch, for the leased keys.
    var uid: UInt32?
    /// The connection whose lease holds its ephemeral values.
    var owner: Int?

    init(_ batch: BatchProposal, holdsLeases: (String) -> Bool) {
        uid = batch.context.uid
        owner = batch.owner
        for change in batch.changes {
            let holds = holdsLeases(change.object)
            var paths: Set<[String]> = []
            for step in change.steps where step.change.kind == .setting {
                let path = step.change.path
                // A set or delete ends the leases at and under its key path, the batch's own earlier ones too.
                leased.removeAll { $0.object == change.object && $0.path.starts(with: path) }
                if holds, paths.insert(path).inserted { ended.append((change.object, path)) }
                if let lifetime = step.change.context.lifetime {
                    leased.append(Leased(object: change.object, path: path, lifetime: lifetime))
                }
            }
        }
    }

    /// The plan of a single change: what its lifetime leases, and its key path's
    /// leased keys ended when it ends leases (a set or delete in an object that holds some).
    init(_ proposal: ChangeProposal) {
        let change = proposal.change, lifetimes = proposal.lifetimes
        uid = change.context.uid
        owner = lifetimes.owner
        if lifetimes.endsLeases { ended = [(change.object, change.path)] }
        if let lifetime = lifetimes.lifetime { leased = [Leased(object: change.object, path: change.path, lifetime: lifetime)] }
    }

    /// Whether leases must be granted first.
    var needsLeases: Bool { !leased.isEmpty }

    /// The ttls of the leases it needs granted, one per value with a `ttl`, in order.
    var ttls: [Double] { leased.compactMap(\.lifetime.ttl) }

    /// When each value with a `ttl` ends, by `[object] + path`, given its
    /// lease's end (`expires`, in the order of ``ttls``): what its steps' records tell.
    func deadlines(_ expires: [Double]) -> [[String]: Double] {
        var deadlines: [[String]: Double] = [:]
        for (value, end) in zip(leased.filter { $0.lifetime.ttl != nil }, expires) {
            deadlines[[value.object] + value.path] = end
        }
        return deadlines
    }
}

extension EtcdLeases {
    /// Grants the leases `plan` needs (its owner's connection lease, a lease
    /// per `ttl`), then gives its operations with them.
    func operations(for plan: BatchLeasePlan, _ done: @escaping (Result<Operations, LeaseFailure>) -> Void) {
        let withTTLs: (Int64?) -> Void = { [weak self] ephemeralLease in
            self?.grantTTLLeases(plan.ttls) { [weak self] result in
                guard let self else { return }
                done(result.map { Operations(operations: operations(plan, ephemeralLease: ephemeralLease, ttlLeases: $0),
                                             ttlLeases: $0.map(\.id), expires: $0.map(\.expires)) })
            }
        }
        guard plan.leased.contains(where: \.lifetime.ephemeral), let owner = plan.owner else { return withTTLs(nil) }
        connectionLease(owner) { result in
            switch result {
            case .success(let lease): withTTLs(lease)
            case .failure(let error): done(.failure(error))
            }
        }
    }

    /// `plan`'s operations with these leases (`ttlLeases` in the order of
    /// ``BatchLeasePlan/ttls``): the ended keys deleted, less the ones put.
    func operations(_ plan: BatchLeasePlan, ephemeralLease: Int64?, ttlLeases: [TTLLease]) -> [EtcdRequestOp] {
        var ttlLease = ttlLeases.makeIterator()
        var puts: [EtcdPutRequest] = []
        for value in plan.leased {
            puts += leasedPuts(value.object, value.path, uid: plan.uid,
                               ephemeralLease: value.lifetime.ephemeral ? ephemeralLease : nil,
                               ttlLease: value.lifetime.ttl != nil ? ttlLease.next() : nil)
        }
        let kept = puts.map(\.key).sorted { $0.lexicographicallyPrecedes($1) }
        var deletes: [EtcdDeleteRequest] = []
        for (object, path) in plan.ended {
            for family in ClusterKeys.Family.allCases {
                let key = keys.leased(family, object, path)
                // The ttl keys are read back so their leases can be revoked (``settled(_:_:)``).
                let prevKV = family == .ttl
                if !kept.contains(where: { $0.elementsEqual(key.utf8) }) {
                    deletes.append(EtcdDeleteRequest(.key(key), prevKV: prevKV))
                }
                deletes += Self.pieces(of: .prefix(key + "/"), sparing: kept).map { EtcdDeleteRequest($0, prevKV: prevKV) }
            }
        }
        return deletes.map(EtcdRequestOp.delete) + puts.map(EtcdRequestOp.put)
    }

    /// `range` less the keys `kept` (sorted): the ranges between them.
    static func pieces(of range: EtcdKeyRange, sparing kept: [[UInt8]]) -> [EtcdKeyRange] {
        var pieces: [EtcdKeyRange] = []
        var start = range.key
        for key in kept where !key.lexicographicallyPrecedes(range.key) && key.lexicographicallyPrecedes(range.rangeEnd) {
            if start.lexicographicallyPrecedes(key) { pieces.append(EtcdKeyRange(key: start, rangeEnd: key)) }
            start = key + [0]
        }
        if start.lexicographicallyPrecedes(range.rangeEnd) {
            pieces.append(EtcdKeyRange(key: start, rangeEnd: range.rangeEnd))
        }
        return pieces
    }

    /// Grants a lease per ttl (seconds, rounded up: etcd counts whole ones),
    /// all at once; if one fails, the others are revoked.
    private func grantTTLLeases(_ ttls: [Double], _ done: @escaping (Result<[TTLLease], LeaseFailure>) -> Void) {
        guard !ttls.isEmpty else { return done(.success([])) }
        var granted = [TTLLease?](repeating: nil, count: ttls.count)
        var failure: LeaseFailure?
        var left = ttls.count
        for (index, ttl) in ttls.enumerated() {
            client.grantLease(ttl: Int64(ttl.rounded(.up))) { [weak self] result in
                switch result {
                case .success(let lease): granted[index] = TTLLease(lease)
                case .failure(let error): failure = failure ?? LeaseFailure("etcd did not grant the ttl's lease: \(error)")
                }
                left -= 1
                guard left == 0, let self else { return }
                if let failure {
                    for case let lease? in granted { revoke(lease.id) }
                    return done(.failure(failure))
                }
                done(.success(granted.compactMap { $0 }))
            }
        }
    }
}
