import DequeModule

/// Work that one request may ask for and that would hold the loop much
/// longer than a turn should (issue 33 row 11), done instead in slices that
/// the daemon asks for once per turn (``Engine/continueSlicedWork(budget:)``),
/// so that every other client is served in between:
///
/// - Unregistering the observations of a client that unobserved everything
///   or closed. They leave the client's table at once and get no event from
///   then on (``ObservationInfo/isLeaving``); only their places in the index
///   are taken out here. Each entry holds its client, so that the
///   observations' unowned back references stay valid until the last is out.
/// - Initial events over many objects: a client's cursors
///   (``ClientController/continueInitialEvents(budget:)``).
extension SharedController {
    /// Units of work in one slice: an observation unregistered, an object
    /// visited or an initial event written. A slice stays well within a
    /// turn's bound (docs/PERFORMANCE.md, "Long requests in slices").
    public static let sliceBudget = 2_048

    struct LeavingObservations {
        let client: ClientController
        /// The client's table as it was, emptied as it goes.
        var slots: [ObservationInfo?]
        var next = 0
    }

    /// Whether a slice of work waits.
    var hasSlicedWork: Bool { !leaving.isEmpty || !pacingClients.isEmpty }

    /// Queues `count` observations of `client`, already out of its table, to
    /// leave the index in slices.
    func unregisterLater(_ slots: [ObservationInfo?], count: Int, of client: ClientController) {
        leaving.append(LeavingObservations(client: client, slots: slots))
        leavingCount += count
    }

    /// Unregisters leaving observations, oldest first, while `budget` lasts.
    func unregisterLeaving(budget: inout Int) {
        while budget > 0, var entry = leaving.popFirst() {
            while budget > 0, entry.next < entry.slots.count {
                let index = entry.next
                entry.next += 1
                guard entry.slots[index] != nil else { continue }
                var info = entry.slots[index].unsafelyUnwrapped
                entry.slots[index] = nil
                budget -= 1
                leavingCount -= 1
                // As in `ClientController.unregister`: a copy of what it observed only if someone holds it.
                let heldElsewhere = !isKnownUniquelyReferenced(&info)
                unregister(info, keepDescription: heldElsewhere)
            }
            if entry.next < entry.slots.count { leaving.prepend(entry) }
        }
    }

    /// The clients that wait for room under `--max-client-memory`, in the
    /// order they began to wait, are asked to drain while there is room (each
    /// drain writes while there is, and waits again when there is not).
    func wakeClientsWaitingForMemory() {
        // Called each pass of flushes while clients wait: without room, the list is left as it is.
        guard clientMemory.hasRoom else { return }
        let waiters = clientMemoryWaiters
        clientMemoryWaiters = []
        var index = 0
        while index < waiters.count, clientMemory.hasRoom {
            let client = waiters[index]
            index += 1
            guard client.waitsForClientMemory else { continue }
            client.stopWaitingForClientMemory()
            client.markDrained()
        }
        // Those not reached keep their place, ahead of any that began to wait again just now.
        clientMemoryWaiters = waiters[index...].filter(\.waitsForClientMemory) + clientMemoryWaiters
    }

    /// `client` has initial events to write in slices (once, however often it asks).
    func notePacing(_ client: ClientController) {
        if !pacingClients.contains(where: { $0 === client }) { pacingClients.append(client) }
    }

    /// Writes the pacing clients' initial events, each client in turn, while `budget` lasts.
    func continueInitialEvents(budget: inout Int) {
        var index = 0
        while index < pacingClients.count, budget > 0 {
            let client = pacingClients[index]
            client.continueInitialEvents(budget: &budget)
            if client.hasPacedInitialEvents { index += 1 } else { pacingClients.remove(at: index) }
        }
        // Who is left starts the next slice: no client waits behind one that never ends.
        if index > 0, index < pacingClients.count {
            pacingClients = Array(pacingClients[index...] + pacingClients[..<index])
        }
    }
}

extension Engine {
    /// Whether work waits to be done in slices (``continueSlicedWork(budget:)``).
    public var hasSlicedWork: Bool { shared.hasSlicedWork }

    /// Does one slice of the work that requests left to be done across
    /// turns (``SharedController/sliceBudget`` units by default): leaving
    /// observations first, then initial events. The daemon calls it once per
    /// turn while ``hasSlicedWork``.
    public func continueSlicedWork(budget: Int = SharedController.sliceBudget) {
        var budget = budget
        shared.unregisterLeaving(budget: &budget)
        shared.continueInitialEvents(budget: &budget)
    }
}
