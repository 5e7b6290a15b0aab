/// What a congested client has not been sent yet, in the order it goes out
/// when the client drains: for each observation whose policy is
/// ``ObservationPolicy/coalesce``, only its latest change event, with the
/// number of earlier ones it replaced (for a prefix observation, the latest
/// one per object); and the initial events of `observe` requests that did not
/// fit in the output (``InitialEvents``, a cursor).
///
/// A held event keeps no bytes: it is the change (one record, shared with the
/// history and with every client that holds it) and the observation, and is
/// encoded when it goes out, from the change and the store's current state
/// (``ClientController``). So a held event costs a few words whatever its
/// value's size, and there is at most one per observation (and object, for a
/// prefix) whatever the rate of changes.
///
/// Items go out in the order they were held; an event that replaces an
/// earlier one goes last, since it is the newest.
///
/// A prefix observation holds nothing for an object that came and went while
/// its client was behind (the object's first held change made it, its last
/// deleted it): the client never knew of the object, and an object that no
/// longer exists keeps no entry here (a churn of short-lived objects would
/// otherwise hold one per name).
struct HeldEvents {
    struct Event {
        let info: ObservationInfo
        let change: ChangeRecord
        /// How many events of this observation (and object) were dropped for this one.
        var folded: Int
        /// Whether the first change this one stands for made its object.
        var fromCreation = false
    }

    enum Item {
        case event(Event)
        case initial(InitialEvents)
    }

    /// The items, oldest first; nil where one was taken or replaced (dropped
    /// when they are more than half: ``compactIfSparse()``).
    private var items: [Item?] = []
    /// Every item before it is nil.
    private var start = 0
    /// How many items are held.
    private(set) var count = 0
    /// Where each plain observation's held event is.
    private var eventPositions: [ObjectIdentifier: Int] = [:]
    /// Where each prefix observation's held events are, by object.
    private var scopedPositions: [ObjectIdentifier: [String: Int]] = [:]
    /// Where each pending cursor is.
    private var initialPositions: [ObjectIdentifier: Int] = [:]
    /// The pending cursor of each observation that has one.
    private var initialOf: [ObjectIdentifier: InitialEvents] = [:]

    var isEmpty: Bool { count == 0 }

    /// The item that goes out next.
    var first: Item? {
        count == 0 ? nil : items[start]
    }

    /// What ``hold(_:for:scoped:folded:)`` did, for the event counts.
    struct Outcome {
        /// Whether it replaced an event held before (one more coalesced).
        var replaced = false
        /// Events that went with an object that came and went: the held
        /// one's folded ones (no longer to be carried as coalesced) and
        /// every event of its chain, this change's included.
        var vanishedFolds = 0
        var vanishedEvents = 0
    }

    /// Keeps `change` as the observation's pending event (of the changed
    /// object, for a prefix observation, `scoped`), replacing (and counting)
    /// the one held before; `folded` more were dropped for it already (a
    /// throttled observation's interval).
    @discardableResult
    mutating func hold(_ change: ChangeRecord, for info: ObservationInfo, scoped: Bool,
                       folded alreadyFolded: Int = 0) -> Outcome {
        let key = ObjectIdentifier(info)
        var folded = alreadyFolded
        var fromCreation = change.createdObject
        let previous = scoped ? scopedPositions[key]?[change.object] : eventPositions[key]
        if let previous, case .event(let event)? = items[previous] {
            folded += event.folded + 1
            fromCreation = event.fromCreation
            items[previous] = nil
            count -= 1
        }
        if scoped, fromCreation, change.deletesObject, !info.options.contains(.prior) {
            // Came and went unseen (a prior event may have gone out: those keep theirs).
            scopedPositions[key]?[change.object] = nil
            if scopedPositions[key]?.isEmpty == true { scopedPositions[key] = nil }
            skipTakenItems()
            compactIfSparse()
            return Outcome(vanishedFolds: folded - (previous == nil ? 0 : 1), vanishedEvents: folded + 1)
        }
        let position = items.count
        items.append(.event(Event(info: info, change: change, folded: folded, fromCreation: fromCreation)))
        count += 1
        if scoped {
            scopedPositions[key, default: [:]][change.object] = position
        } else {
            eventPositions[key] = position
        }
        skipTakenItems()
        compactIfSparse()
        return Outcome(replaced: folded > alreadyFolded)
    }

    /// Adds the initial events that did not fit, after everything held.
    mutating func append(_ initial: InitialEvents) {
        initialPositions[ObjectIdentifier(initial)] = items.count
        for info in initial.infos { initialOf[ObjectIdentifier(info)] = initial }
        items.append(.initial(initial))
        count += 1
    }

    /// Counts an initial event as folded into the change event held for the
    /// same observation and object, if there is one, which then stands for
    /// it. Returns whether there was one.
    mutating func foldInitial(into info: ObservationInfo, object: String, scoped: Bool) -> Bool {
        let key = ObjectIdentifier(info)
        guard let position = scoped ? scopedPositions[key]?[object] : eventPositions[key],
              case .event(var event)? = items[position] else { return false }
        event.folded += 1
        items[position] = .event(event)
        return true
    }

    /// Forgets the observation's pending events (it was unobserved), and the
    /// cursor of its initial events once none of its observations is left.
    mutating func drop(_ info: ObservationInfo) {
        let key = ObjectIdentifier(info)
        if let position = eventPositions.removeValue(forKey: key) { take(at: position) }
        if let positions = scopedPositions.removeValue(forKey: key) {
            for position in positions.values { take(at: position) }
        }
        if let initial = initialOf.removeValue(forKey: key) {
            initial.remaining -= 1
            if initial.remaining == 0, let position = initialPositions.removeValue(forKey: ObjectIdentifier(initial)) {
                take(at: position)
            }
        }
        skipTakenItems()
        compactIfSparse()
    }

    /// Takes the item that goes out next.
    mutating func removeFirst() {
        guard count > 0 else { return }
        switch items[start] {
        case .event(let event)?:
            let key = ObjectIdentifier(event.info)
            if event.info.scope.isPrefix {
                scopedPositions[key]?[event.change.object] = nil
                if scopedPositions[key]?.isEmpty == true { scopedPositions[key] = nil }
            } else {
                eventPositions[key] = nil
            }
        case .initial(let initial)?:
            initialPositions[ObjectIdentifier(initial)] = nil
            for info in initial.infos where initialOf[ObjectIdentifier(info)] === initial {
                initialOf[ObjectIdentifier(info)] = nil
            }
        case nil:
            break
        }
        take(at: start)
        skipTakenItems()
        compactIfSparse()
    }

    private mutating func take(at position: Int) {
        guard items[position] != nil else { return }
        items[position] = nil
        count -= 1
    }

    private mutating func skipTakenItems() {
        while start < items.count, items[start] == nil { start += 1 }
        if count == 0 {
            items.removeAll(keepingCapacity: items.count <= 64)
            start = 0
        }
    }

    /// Drops the taken items once they are more than half, so that a client
    /// whose events keep replacing each other holds one slot per event.
    private mutating func compactIfSparse() {
        guard items.count >= 64, count * 2 < items.count else { return }
        let kept = items.compactMap { $0 }
        items = kept
        start = 0
        eventPositions.removeAll(keepingCapacity: true)
        scopedPositions.removeAll(keepingCapacity: true)
        initialPositions.removeAll(keepingCapacity: true)
        for (position, item) in kept.enumerated() {
            switch item {
            case .event(let event):
                let key = ObjectIdentifier(event.info)
                if event.info.scope.isPrefix {
                    scopedPositions[key, default: [:]][event.change.object] = position
                } else {
                    eventPositions[key] = position
                }
            case .initial(let initial):
                initialPositions[ObjectIdentifier(initial)] = position
            }
        }
    }
}
