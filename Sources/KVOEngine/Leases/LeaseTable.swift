import DequeModule
import HeapModule
import KVOValues

/// Every lease in the engine, found three ways: by value (in its object's
/// entry, so a change finds the leases it ends with the hash of the name it
/// already did), by owner (a closing connection finds its values without a
/// scan), and by deadline (a heap: the next value to expire is at its top).
/// The table keeps the three in step: the engine only tells it of changes.
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

        /// The key path's components.
        var components: [String] {
            keyPath.isEmpty ? [] : keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        }
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

    /// The table whose entries hold each object's leases by key path.
    private let objects: ObjectTable
    @exclusivity(unchecked) private(set) var byOwner: [Int: Set<Place>] = [:]
    @exclusivity(unchecked) private(set) var deadlines = Heap<Deadline>()
    /// The generations of the grants whose deadline is in the heap and
    /// still holds. A renewal leaves its old entry behind, so the heap is
    /// rebuilt without the stale ones when they outnumber the live ones:
    /// a value renewed every second with a year's ttl would otherwise keep
    /// a year of entries.
    @exclusivity(unchecked) private var liveDeadlines: Set<UInt64> = []
    @exclusivity(unchecked) private var expired = Deque<Release>()
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
    @exclusivity(unchecked) private var leftOwners = Deque<DepartedOwner>()
    @exclusivity(unchecked) private var nextGeneration: UInt64 = 1
    /// How many leases are held.
    @exclusivity(unchecked) private(set) var count = 0

    init(objects: ObjectTable) {
        self.objects = objects
    }

    /// The lease on exactly `keyPath` (components joined by `.`) of `object`, if any.
    func lease(of object: String, at keyPath: String) -> Lease? {
        objects.entry(object)?.leases?[keyPath]?.lease
    }

    /// Whether some value of `object` is leased.
    func holdsLeases(in object: String) -> Bool { objects.entry(object)?.leases != nil }

    /// After `change` was applied: a setting (set, delete) ends the leases at
    /// or under its key path; one with a lease starts that one. `entry` is
    /// the object's, when the caller has it at hand.
    func update(for change: ChangeRecord, in entry: ObjectTable.Entry?) {
        guard change.kind == .setting else { return }
        guard let entry = entry ?? objects.entry(change.object) else { return }
        guard entry.leases != nil || change.lease != nil else { return }
        // Taken out of the entry and not iterated while changed, so that
        // the dictionary is never copied (with 100 leases in an object, the
        // copies were most of a deletion's cost).
        var leases = entry.leases ?? [:]
        entry.leases = nil
        let path = change.path.joined(separator: ".")
        var ended: [String] = []
        if path.isEmpty || Self.isObject(change.old) {
            for keyPath in leases.keys where CanonicalName.keyPath(keyPath, isAtOrUnder: path) { ended.append(keyPath) }
        } else if leases[path] != nil {
            // Leases under a key path are on members of the object it held: a scalar or an array
            // there has none, so the object's other leases need no look (an object with 100,000
            // leased members made each deletion a pass over all of them).
            ended.append(path)
        }
        for keyPath in ended {
            guard let held = leases.removeValue(forKey: keyPath) else { continue }
            removed(held.lease, at: Place(object: change.object, keyPath: keyPath), generation: held.generation)
        }
        if let lease = change.lease, change.new != nil {
            grant(lease, at: Place(object: change.object, keyPath: path), in: &leases)
        }
        objects.setLeases(leases.isEmpty ? nil : leases, of: entry, named: change.object)
    }

    private static func isObject(_ value: JSONValue?) -> Bool {
        if case .object? = value { true } else { false }
    }

    /// Restores saved leases: deadlines go on; ephemeral values, whose owners
    /// were connections of a previous run, are queued for deletion.
    func restore(_ saved: [SavedLease]) {
        for saved in saved {
            guard let entry = objects.entry(saved.object), entry.members != nil else { continue }
            let lease = Lease(owner: saved.ephemeral ? Self.previousRun : nil, ephemeral: saved.ephemeral,
                              deadline: saved.deadline)
            var leases = entry.leases ?? [:]
            grant(lease, at: Place(object: saved.object, keyPath: saved.keyPath), in: &leases)
            entry.leases = leases
        }
        // The previous run's connections are gone: their values go now.
        ownerLeft(Self.previousRun)
    }

    /// Marks the value at `place` (in `entry`, its object's) leased by the
    /// replicated store since the set at `revision`, with the deadline it
    /// tells (`expires`).
    func restoreReplicated(_ place: Place, in entry: ObjectTable.Entry, ephemeral: Bool, at revision: UInt64,
                           expires: Double?) {
        var leases = entry.leases ?? [:]
        var lease = Lease(owner: nil, ephemeral: ephemeral, deadline: expires, replicatedAt: revision)
        if let held = leases[place.keyPath] {
            // Both families' keys of one set: one lease, ephemeral if either says so.
            lease.ephemeral = lease.ephemeral || (held.lease.replicatedAt == revision && held.lease.ephemeral)
            removed(held.lease, at: place, generation: held.generation)
        }
        grant(lease, at: place, in: &leases)
        objects.setLeases(leases, of: entry, named: place.object)
    }

    /// Puts `lease` on the value at `place`, in its object's `leases`, under a new generation.
    private func grant(_ lease: Lease, at place: Place, in leases: inout [String: (lease: Lease, generation: UInt64)]) {
        let generation = nextGeneration
        nextGeneration += 1
        leases[place.keyPath] = (lease, generation)
        added(lease, at: place, generation: generation)
    }

    private func added(_ lease: Lease, at place: Place, generation: UInt64) {
        count += 1
        if let owner = lease.owner { byOwner[owner, default: []].insert(place) }
        // Over etcd the store's lease ends the value; its deadline is only told (`expiresIn`).
        if let deadline = lease.deadline, lease.replicatedAt == nil {
            deadlines.insert(Deadline(time: deadline, place: place, generation: generation))
            liveDeadlines.insert(generation)
        }
    }

    private func removed(_ lease: Lease, at place: Place, generation: UInt64) {
        count -= 1
        if let owner = lease.owner {
            byOwner[owner]?.remove(place)
            if byOwner[owner]?.isEmpty == true { byOwner[owner] = nil }
        }
        if liveDeadlines.remove(generation) != nil { pruneStaleDeadlines() }
    }

    /// Rebuilds the heap without the deadlines of grants that ended, once
    /// they are more than half of it: O(1) amortized per ended grant.
    private func pruneStaleDeadlines() {
        let stale = deadlines.count - liveDeadlines.count
        guard stale > 64, stale > liveDeadlines.count else { return }
        deadlines = Heap(deadlines.unordered.filter { liveDeadlines.contains($0.generation) })
    }

    /// What the table keeps, in bytes, for the memory account: each heap
    /// entry and live generation, and each owned place (their names are
    /// shared with the store's, so only the references count; every lease
    /// is counted as if owned, which keeps this O(1)).
    var bytes: Int {
        deadlines.count * MemoryLayout<Deadline>.stride
            + liveDeadlines.count * 2 * MemoryLayout<UInt64>.stride
            + count * 2 * MemoryLayout<Place>.stride
    }

    /// Queues the values `owner` holds for deletion (its connection closed).
    /// O(1): the places are taken out one by one as they are released.
    func ownerLeft(_ owner: Int) {
        guard let places = byOwner.removeValue(forKey: owner) else { return }
        leftOwners.append(DepartedOwner(owner: owner, places: places))
    }

    /// Moves deadlines that passed by `now` into the queue, until it holds
    /// `limit` (a heap pop each: 100,000 at once held the loop too long);
    /// stale ones are dropped, at most `4 × limit` pops a call.
    func collectExpired(now: Double, limit: Int) {
        var pops = 0
        while expired.count < limit, pops < 4 * limit, let next = deadlines.min, next.time <= now {
            _ = deadlines.popMin()
            pops += 1
            guard liveDeadlines.contains(next.generation) else { continue }
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

    /// The deletion `release` asks for, and its cause; nil when the value is
    /// no longer the one it was queued for (renewed, taken over, ended).
    func due(_ release: Release) -> (Place, ChangeCause)? {
        switch release {
        case .ownerLeft(let place, let owner):
            lease(of: place.object, at: place.keyPath)?.owner == owner ? (place, .disconnect) : nil
        case .expired(let place, let generation):
            objects.entry(place.object)?.leases?[place.keyPath]?.generation == generation ? (place, .ttl) : nil
        }
    }

    /// Whether releases are queued.
    var hasPending: Bool { !leftOwners.isEmpty || !expired.isEmpty }

}
