import KVOValues

/// Values that live as long as their owner or until a deadline: the
/// bookkeeping a change does for them, and the deletions kvod makes itself.
extension Engine {
    /// The lease a set with `lifetime` from `client` puts on its value.
    @inline(__always)
    func lease(for lifetime: ValueLifetime?, from client: ClientController) -> Lease? {
        guard let lifetime else { return nil }
        return Lease(owner: lifetime.ephemeral ? client.id : nil, ephemeral: lifetime.ephemeral,
                     deadline: lifetime.ttl.map { configuration.wallClock() + $0 })
    }

    /// After `change` was applied: a set or delete at a key path ends the
    /// leases at or under it; a set with a lease starts that one. `entry`
    /// is the object's, when the caller has it at hand.
    @inline(__always)
    func updateLeases(for change: ChangeRecord, in entry: ObjectTable.Entry?) {
        // Most changes carry no lease to an object that holds none: no call.
        if let entry, entry.leases == nil, change.lease == nil { return }
        leaseTable.update(for: change, in: entry)
    }

    /// Makes up to `budget` of the deletions that are due: values whose
    /// owner left, and values whose deadline passed by now. Each is a change
    /// like a `delete`, with its `cause`. Returns whether more are due (call
    /// again soon, after serving others).
    @discardableResult
    public func releaseDueValues(budget: Int = 500) -> Bool {
        let now = configuration.wallClock()
        leaseTable.collectExpired(now: now, limit: budget)
        var made = 0
        // Popping a stale release (renewed, taken over, ended) is cheap, but
        // not free: at most four per deletion, so a pass stays bounded.
        var popped = 0
        while made < budget, popped < 4 * budget, let release = leaseTable.popPending() {
            popped += 1
            guard let (place, cause) = leaseTable.due(release) else { continue }
            _ = delete(place.object, releaseTarget(of: place.object, at: place.components), cause: cause)
            made += 1
        }
        // Or a deadline passed by now that is not queued yet.
        return leaseTable.hasPending || nextLeaseDeadline.map { $0 <= now } ?? false
    }

    /// What a lease's end deletes: the leased value at `path` of `object`, or
    /// (nil) the whole document when that value is all it holds. An object
    /// that only held what a lease held goes with it, so `list` and prefix
    /// observers see a registry's entry go when its service does.
    func releaseTarget(of object: String, at path: [String]) -> ObservedPath? {
        guard !path.isEmpty else { return nil }
        if path.count == 1, let members = store.document(object), members.count == 1, members.keys[0] == path[0] {
            return nil
        }
        return ObservedPath(components: path)
    }

    /// When the next deadline falls (maybe one since renewed), in wall-clock
    /// seconds; nil when none is held. The daemon's timer aims at it.
    public var nextLeaseDeadline: Double? { leaseTable.deadlines.min?.time }

    /// Whether deletions are queued (an owner left, an orphan at start).
    public var hasPendingReleases: Bool { leaseTable.hasPending }

    /// How many values `client` owns (ephemeral ones it set and nobody took over).
    public func valuesOwned(by client: ClientController) -> Int { leaseTable.byOwner[client.id]?.count ?? 0 }
}

/// A lease as the data directory keeps it (its owner is not kept: after a
/// restart, every ephemeral value's owner is gone).
public struct SavedLease: Sendable, Equatable {
    public let object: String
    /// Components joined by `.`; empty for the whole document.
    public let keyPath: String
    public let ephemeral: Bool
    public let deadline: Double?

    public init(object: String, keyPath: String, ephemeral: Bool, deadline: Double?) {
        self.object = object
        self.keyPath = keyPath
        self.ephemeral = ephemeral
        self.deadline = deadline
    }
}
