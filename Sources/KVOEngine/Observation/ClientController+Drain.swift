import KVOValues

/// What a client is sent beyond live events: held events when it drains,
/// initial events, replayed events. Each is encoded only when it goes out,
/// straight into the output, and only while the output has room (its
/// ``ClientController/outputAllowance``): one request or one change costs at
/// most the allowance and one event in output, whatever it covers; the rest
/// waits as held events and cursors that keep no bytes.
extension ClientController {
    /// Whether the output may take more before it reaches its allowance.
    var hasRoom: Bool {
        !SlowReaderPolicy.overflows(output.count + 1, allowance: outputAllowance)
    }

    /// The consumer took everything: writes what is held, in order, each held
    /// event with `"coalesced":N` when N events were dropped for it, until the
    /// output reaches its allowance (at least one event); what is left goes
    /// out at the next drain. Ends the congestion once nothing is held. Does
    /// nothing if the client is not congested.
    public func markDrained() {
        guard isCongested else { return }
        guard !isClosed, disconnectReason == nil else {
            isCongested = false
            discardHeld()
            return
        }
        // All clients' output at `--max-client-memory`: the drain waits for room.
        guard shared.clientMemory.hasRoom else {
            // The wake drains it: not the slices, which would run every turn meanwhile.
            drainsInSlices = false
            return waitForClientMemory()
        }
        let wasEmpty = output.isEmpty
        let before = output.count
        defer { shared.clientMemory.unflushed &+= output.count - before }
        // Initial events also within a slice: an allowance of megabytes is a long turn of them.
        var budget = SharedController.sliceBudget
        drainsInSlices = false
        drain: while let item = held.first, output.isEmpty || hasRoom,
                     output.count - before <= shared.clientMemory.room {
            switch item {
            case .event(let event):
                held.removeFirst()
                if event.info.state == .observing { write(event) }
            case .initial(let initial):
                if writeInitialEvents(of: initial, whileRoom: false, budget: &budget) {
                    held.removeFirst()
                } else if budget <= 0 {
                    // What was written drains first, and the next drain goes on; if
                    // nothing was (objects the client may not read), the next slice does.
                    if output.isEmpty {
                        drainsInSlices = true
                        shared.notePacing(self)
                    }
                    break drain
                }
            }
        }
        if held.isEmpty { isCongested = false }
        if wasEmpty, !output.isEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    /// Writes a held event, encoded now from its change and the store's
    /// current value at the observed key path. That value is the one the
    /// change left there: a later change to it would have replaced this event.
    func write(_ held: HeldEvents.Event) {
        let info = held.info
        let change = held.change
        guard let node = info.node, let relation = ObservedChange.relation(of: node.path, to: change) else { return }
        let (old, new) = ObservedChange.values(of: change, at: node, relation, wantsOld: info.options.contains(.old)) {
            shared.value(change.object, at: $0)
        }
        let event = ObservedChange(change, relation, old: old, new: new, options: info.options, prior: false)
        EventEncoder.write(event, head: info.eventHead(forObject: change.object), compact: info.isCompact, to: &output)
        endEvent(of: info, seq: change.seq, coalesced: held.folded)
    }

    /// Replaces the `}\n` that the encoder ended the event with by what goes
    /// before it: `"coalesced":N` when N > 0, the observation's context.
    private func endEvent(of info: ObservationInfo, seq: UInt64, coalesced: Int = 0) {
        shared.eventsSent &+= 1
        shared.eventsCoalesced &+= UInt64(coalesced)
        info.noteSent(seq: seq, coalesced: coalesced)
        let fragment = info.contextFragment
        guard coalesced > 0 || fragment != nil else { return }
        output.removeLast(EventEncoder.eventTerminator.count)
        if coalesced > 0 {
            output.append(contentsOf: EventEncoder.coalescedLabel)
            output.append(decimal: coalesced)
        }
        if let fragment { output.append(contentsOf: fragment) }
        output.append(contentsOf: EventEncoder.eventTerminator)
    }

    // MARK: Initial events

    /// Sends the initial events of an `observe` (KVO's `initial`): as many as
    /// fit now and one slice allows (``SharedController/sliceBudget``), before
    /// the request's reply; the rest from the cursor after it, a slice per
    /// loop turn (``continueInitialEvents(budget:)``), or as the client
    /// drains if it fell behind. While congested, or while earlier ones are
    /// still being written, all of them wait.
    func send(_ initial: InitialEvents) {
        guard !isClosed, disconnectReason == nil else { return }
        guard !isCongested else { return held.append(initial) }
        guard pacedInitials.isEmpty else { return pacedInitials.append(initial) }
        let wasEmpty = output.isEmpty
        var budget = SharedController.sliceBudget
        let finished = writeInitialEvents(of: initial, whileRoom: true, budget: &budget)
        if wasEmpty, !output.isEmpty { outputDelegate?.clientControllerHasOutput(self) }
        if finished { return }
        if budget > 0 {
            // No room: the client drains the rest.
            becomeCongested()
            held.append(initial)
        } else {
            pacedInitials.append(initial)
            shared.notePacing(self)
        }
    }

    /// Whether initial events wait for their next slice.
    var hasPacedInitialEvents: Bool { !pacedInitials.isEmpty || drainsInSlices }

    /// Writes the next slice of the paced initial events, oldest first, while
    /// `budget` lasts and the output has room; when it has none, the client
    /// is congested and the cursors wait there, ahead of what it holds.
    func continueInitialEvents(budget: inout Int) {
        guard !isClosed, disconnectReason == nil else { return }
        if isCongested {
            // A drain stopped at its slice having written nothing: no write will end to call it again.
            if drainsInSlices, output.isEmpty { markDrained() } else { drainsInSlices = false }
            return
        }
        let wasEmpty = output.isEmpty
        while let initial = pacedInitials.first, budget > 0 {
            if writeInitialEvents(of: initial, whileRoom: true, budget: &budget) {
                pacedInitials.removeFirst()
            } else if budget > 0 {
                becomeCongested()
                break
            }
        }
        if wasEmpty, !output.isEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    /// `info` was unobserved: the paced cursors whose every observation is
    /// gone are dropped.
    func dropPacedInitialEvents(of info: ObservationInfo) {
        guard !pacedInitials.isEmpty else { return }
        for initial in pacedInitials where initial.covers(info) { initial.remaining -= 1 }
        pacedInitials.removeAll { $0.remaining <= 0 }
    }

    /// Writes initial events from the cursor while the output has room (when
    /// draining, at least one while it is empty) and `budget` lasts (an
    /// object visited or an event written costs one). An event of an
    /// observation that a change event is held for is not written: the change
    /// event stands for it, and counts it as folded; nor one that a live
    /// change event went out for while the cursor waited for its slice.
    /// Returns whether the cursor is done.
    private func writeInitialEvents(of initial: InitialEvents, whileRoom: Bool, budget: inout Int) -> Bool {
        let names = shared.objectNames
        let policy = shared.accessPolicy
        let credentials = self.credentials
        let mayRead = { (name: String) in policy?.allows(.read, on: name, for: credentials) ?? true }
        while let (object, info) = initial.next(in: names, budget: &budget, mayRead: mayRead) {
            guard whileRoom ? hasRoom : output.isEmpty || hasRoom else { return false }
            initial.removeNext()
            budget -= 1
            guard info.state == .observing, let node = info.node else { continue }
            if held.foldInitial(into: info, object: object, scoped: node.isPrefixScope) {
                shared.eventCounts.coalesced += 1
                continue
            }
            if initial.wasSentAhead(info, object: object) { continue }
            let current = info.options.contains(.new) ? shared.value(object, at: node.path) : nil
            let event = ObservedChange(initialValue: current, options: info.options, seq: initial.seq)
            EventEncoder.write(event, head: info.eventHead(forObject: object), compact: info.isCompact, to: &output)
            endEvent(of: info, seq: initial.seq)
        }
        return initial.isFinished
    }

    // MARK: Replayed events

    /// Delivers a replayed event of `change` for `info`, which `encode` writes
    /// (the whole line, `}\n` included) only if it goes out now; while
    /// congested, the observation's policy applies, as to a live event.
    func deliverReplayed(_ change: ChangeRecord, for info: ObservationInfo, isPrior: Bool,
                         encode: (inout GrowableBytes) -> Void) {
        guard !isClosed, disconnectReason == nil else { return }
        guard !isCongested else { return hold(change, for: info, isPrior: isPrior) }
        let wasEmpty = output.isEmpty
        encode(&output)
        endEvent(of: info, seq: change.seq)
        if SlowReaderPolicy.overflows(output.count, allowance: outputAllowance) { becomeCongested() }
        if wasEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }
}
