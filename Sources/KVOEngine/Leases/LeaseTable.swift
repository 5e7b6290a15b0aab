import DequeModule
import HeapModule

/// Every lease in the engine, found three ways: by value (in its object's
/// entry, so a change finds the leases it ends with the hash of the name it
/// already did), by owner (a closing connection finds its values without a
/// scan), and by deadline (a heap: the next value to expire is at its top).
///
/// Releasing is sliced: a closing connection that owns 100,000 values, or
/// 100,000 deadlines passing at once, become a queue of deletions that the
/// daemon drains a few hundred at a time between its other work.
final class LeaseTable {
    /// A leased value: its object and key path (components joined by `.`;
    /// empty for the whole document).
    struct Place: Hashable {
        let object: String
        let keyPath: String
    }

    /// A deadline in the heap. Stale ones (the lease was renewed or ended
    /// since) are skipped when they come up: `generation` no longer matches.
    struct Deadline: Comparable {
        let time: Double
        let place: Place
        let generation: UInt64
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.time < rhs.time }
        static func == (lhs: Deadline, rhs: Deadline) -> Bool { lhs.time == rhs.time && lhs.generation == rhs.generation }
    }

    /// A value to delete, and why.
    struct Release {
        let place: Place
        let cause: ChangeCause
        let generation: UInt64
    }

    private(set) var byOwner: [Int: Set<Place>] = [:]
    private var deadlines = Heap<Deadline>()
    private(set) var pending = Deque<Release>()
    private var nextGeneration: UInt64 = 1
    /// How many leases are held.
    private(set) var count = 0

    func makeGeneration() -> UInt64 {
        defer { nextGeneration += 1 }
        return nextGeneration
    }

    func added(_ lease: Lease, at place: Place, generation: UInt64) {
        count += 1
        if let owner = lease.owner { byOwner[owner, default: []].insert(place) }
        if let deadline = lease.deadline { deadlines.insert(Deadline(time: deadline, place: place, generation: generation)) }
    }

    func removed(_ lease: Lease, at place: Place) {
        count -= 1
        if let owner = lease.owner {
            byOwner[owner]?.remove(place)
            if byOwner[owner]?.isEmpty == true { byOwner[owner] = nil }
        }
    }

    /// Queues the values `owner` holds for deletion (its connection closed).
    func ownerLeft(_ owner: Int, generationOf: (Place) -> UInt64?) {
        guard let places = byOwner.removeValue(forKey: owner) else { return }
        // In the set's order: sorting 100,000 places held the loop longer than deleting a slice.
        for place in places {
            if let generation = generationOf(place) {
                pending.append(Release(place: place, cause: .disconnect, generation: generation))
            }
        }
    }

    /// Queues a value for deletion at once (an orphan found at start).
    func release(_ place: Place, cause: ChangeCause, generation: UInt64) {
        pending.append(Release(place: place, cause: cause, generation: generation))
    }

    /// Moves deadlines that passed by `now` into the queue, until it holds
    /// `limit` (a heap pop each: 100,000 at once held the loop too long).
    func collectExpired(now: Double, limit: Int) {
        while pending.count < limit, let next = deadlines.min, next.time <= now {
            _ = deadlines.popMin()
            pending.append(Release(place: next.place, cause: .ttl, generation: next.generation))
        }
    }

    /// The next release to make, if any.
    func popPending() -> Release? { pending.popFirst() }

    /// Whether a deadline has passed by `now` that is not queued yet.
    func hasExpired(now: Double) -> Bool { deadlines.min.map { $0.time <= now } ?? false }

    /// The earliest deadline held (maybe stale), for the daemon's timer.
    var nextDeadline: Double? { deadlines.min?.time }
}
