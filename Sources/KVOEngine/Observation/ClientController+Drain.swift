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
        let wasEmpty = output.isEmpty
        while let item = held.first, output.isEmpty || hasRoom {
            switch item {
            case .event(let event):
                held.removeFirst()
                if event.info.state == .observing { write(event) }
            case .initial(let initial):
                if writeInitialEvents(of: initial, whileRoom: false) { held.removeFirst() }
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
            EventEncoder.appendDecimal(coalesced, to: &output)
        }
        if let fragment { output.append(contentsOf: fragment) }
        output.append(contentsOf: EventEncoder.eventTerminator)
    }

    // MARK: Initial events

    /// Sends the initial events of an `observe` (KVO's `initial`): as many as
    /// fit now, before the request's reply; the rest from the cursor as the
    /// client drains, after it. While congested, all of them wait there.
    func send(_ initial: InitialEvents) {
        guard !isClosed, disconnectReason == nil else { return }
        if !isCongested {
            let wasEmpty = output.isEmpty
            let finished = writeInitialEvents(of: initial, whileRoom: true)
            if wasEmpty, !output.isEmpty { outputDelegate?.clientControllerHasOutput(self) }
            if finished { return }
            becomeCongested()
        }
        held.append(initial)
    }

    /// Writes initial events from the cursor while the output has room (when
    /// draining, at least one while it is empty). An event of an observation
    /// that a change event is held for is not written: the change event
    /// stands for it, and counts it as folded. Returns whether the cursor is done.
    private func writeInitialEvents(of initial: InitialEvents, whileRoom: Bool) -> Bool {
        let names = shared.objectNames
        let policy = shared.accessPolicy
        let credentials = self.credentials
        let mayRead = { (name: String) in policy?.allows(.read, on: name, for: credentials) ?? true }
        while let (object, info) = initial.next(in: names, mayRead: mayRead) {
            guard whileRoom ? hasRoom : output.isEmpty || hasRoom else { return false }
            initial.removeNext()
            guard info.state == .observing, let node = info.node else { continue }
            if held.foldInitial(into: info, object: object, scoped: node.isPrefixScope) {
                shared.eventCounts.coalesced += 1
                continue
            }
            let current = info.options.contains(.new) ? shared.value(object, at: node.path) : nil
            let event = ObservedChange(initialValue: current, options: info.options, seq: initial.seq)
            EventEncoder.write(event, head: info.eventHead(forObject: object), compact: info.isCompact, to: &output)
            endEvent(of: info, seq: initial.seq)
        }
        return true
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
