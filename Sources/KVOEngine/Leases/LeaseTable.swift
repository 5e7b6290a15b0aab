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

    /// A value to delete, and why: its owner left (it is deleted if that
    /// owner still owns it), or its deadline passed (if that grant, named by
    /// its generation, still holds).
    enum Release {
        case ownerLeft(Place, owner: Int)
        case expired(Place, generation: UInt64)
    }

    /// The owner id of ephemeral values restored from disk: their
    /// connections were of a previous run (clients are numbered from 1).
    static let previousRun = 0

    private(set) var byOwner: [Int: Set<Place>] = [:]
    private var deadlines = Heap<Deadline>()
    private var expired = Deque<Release>()
    /// An owner that left and the values it held, walked a slice at a time
    /// by index: handing over the set costs nothing at close, and walking it
    /// never copies or rehashes it (popping from a 100,000-place set copied
    /// it whole each time: 0.7 s a slice).
    private final class DepartedOwner {
        let owner: Int
        let places: Set<Place>
        var next: Set<Place>.Index
        init(owner: Int, places: Set<Place>) {
            self.owner = owner
            self.places = places
            self.next = places.startIndex
        }
    }

    /// The values of owners that left, oldest first.
    private var leftOwners = Deque<DepartedOwner>()
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
        // Over etcd the store's lease ends the value; its deadline is only told (`expiresIn`).
        if let deadline = lease.deadline, lease.replicatedAt == nil {
            deadlines.insert(Deadline(time: deadline, place: place, generation: generation))
        }
    }

    func removed(_ lease: Lease, at place: Place) {
        count -= 1
        if let owner = lease.owner {
            byOwner[owner]?.remove(place)
            if byOwner[owner]?.isEmpty == true { byOwner[owner] = nil }
        }
    }

    /// Queues the values `owner` holds for deletion (its connection closed).
    /// O(1): the places are taken out one by one as they are released.
    func ownerLeft(_ owner: Int) {
        guard let places = byOwner.removeValue(forKey: owner) else { return }
        leftOwners.append(DepartedOwner(owner: owner, places: places))
    }

    /// Moves deadlines that passed by `now` into the queue, until it holds
    /// `limit` (a heap pop each: 100,000 at once held the loop too long).
    func collectExpired(now: Double, limit: Int) {
        while expired.count < limit, let next = deadlines.min, next.time <= now {
            _ = deadlines.popMin()
            expired.append(.expired(next.place, generation: next.generation))
        }
    }

    /// The next release to make, if any: departed owners' values first.
    func popPending() -> Release? {
        while let first = leftOwners.first {
            if first.next != first.places.endIndex {
                let place = first.places[first.next]
                first.next = first.places.index(after: first.next)
                return .ownerLeft(place, owner: first.owner)
            }
            leftOwners.removeFirst()
        }
        return expired.popFirst()
    }

    /// Whether releases are queued.
    var hasPending: Bool { !leftOwners.isEmpty || !expired.isEmpty }

    /// Whether a deadline has passed by `now` that is not queued yet.
    func hasExpired(now: Double) -> Bool { deadlines.min.map { $0.time <= now } ?? false }

    /// The earliest deadline held (maybe stale), for the daemon's timer.
    var nextDeadline: Double? { deadlines.min?.time }
}
