import KVOValues
import KVOProtocol

/// Observing: many local subscriptions per daemon observation, events routed
/// by (object, key path), or by (prefix, key path) when they carry `prefix`
/// (a nil key path: the whole document), and the moments at which a
/// subscription starts to receive changes.
///
/// A subscription goes live exactly at the reply of the request that set it
/// up (its entry's `observe`, or its own initial `get`): everything kvod sent
/// before that reply predates it, everything after is news to it.
extension ConnectionCore {
    /// Starts delivering the changes of `key` to `sink`; with `since`, first
    /// the changes after that point. On a closed connection the subscription
    /// is ended at once and `sink` finished.
    func subscribe(_ key: ObservationKey, options: ObservationOptions, delivery: DeliveryOptions = .all,
                   context: JSONValue?, since: ResumePoint? = nil, sink: any ChangeSink) -> Subscription {
        let subscription = Subscription(key: key, options: options, delivery: delivery, context: context, sink: sink,
                                        phase: .ended)
        let failure = state.withLock { state -> KVOClientError? in
            if case .closed(let error) = state.phase { return error }
            if delivery.everyChange, delivery.throttle != nil {
                return KVOClientError(.badRequest, "a throttle folds changes; DeliveryOptions.everyChange asks for "
                                          + "every change of \(key.description): choose one")
            }
            if let since { return resume(subscription, since: since, in: &state) }
            let wantsInitial = options.contains(.initial)
            if let entry = state.entries[key] {
                guard entry.delivery.daemonSettings == delivery.daemonSettings else {
                    // kvod keeps one observation per key path and connection, and applies its delivery itself.
                    return KVOClientError(.badRequest, "\(key.description) is already observed on this connection "
                                              + "with other delivery options (\(entry.delivery.description), not "
                                              + "\(delivery.description)); observe it on another connection")
                }
                if wantsInitial && key.isPrefix {
                    // One initial event per object under the prefix comes only with the daemon's observe.
                    return KVOClientError(.badRequest, "the prefix \(key.object) is already observed on this "
                                              + "connection; .initial is only for its first observer")
                }
                entry.subscriptions.append(subscription)
                if state.isConnected, !entry.covers(subscription) {
                    // Registered without options it needs: it goes live once the entry is registered with them.
                    registerAgain(entry, for: subscription, in: &state)
                } else if wantsInitial {
                    // The daemon already observes this key path: it will send no initial event.
                    subscription.phase = .awaitingInitialValue
                    if state.isConnected {
                        _ = enqueue(entry.initialValueRequest().line, .initialValue(subscription), in: &state)
                    }
                } else {
                    subscription.phase = entry.isRegistered ? .live : .awaitingRegistration(wantsInitialEvent: false)
                }
                return nil
            }
            let entry = ObservationEntry(key: key, delivery: delivery.daemonSettings)
            entry.subscriptions.append(subscription)
            state.entries[key] = entry
            if state.isConnected {
                subscription.phase = .awaitingRegistration(wantsInitialEvent: wantsInitial)
                _ = enqueue(entry.observeRequest(initial: wantsInitial).line,
                            .registration(entry, initialFor: wantsInitial ? subscription : nil), in: &state)
            } else {
                // Reconnecting: the re-registration will cover it.
                subscription.phase =
                    wantsInitial ? .awaitingInitialValue : .awaitingRegistration(wantsInitialEvent: false)
            }
            return nil
        }
        if let failure { sink.finish(failure) }
        return subscription
    }

    /// Registers `subscription` as a new entry that resumes after `since`:
    /// kvod replays the missed changes before its reply, so the subscription
    /// is live at once. Call with the lock held.
    private func resume(_ subscription: Subscription, since: ResumePoint, in state: inout State) -> KVOClientError? {
        let key = subscription.key
        guard state.entries[key] == nil else {
            return KVOClientError(.badRequest, "\(key.description) is already observed on this connection; "
                                      + "since can only replay for a new observation")
        }
        guard !subscription.options.contains(.initial) else {
            return KVOClientError(.badRequest,
                                  "since and .initial exclude each other: the replay brings the observer up to date")
        }
        let entry = ObservationEntry(key: key, delivery: subscription.delivery.daemonSettings)
        entry.cursor = ResumeCursor(seq: since.seq)
        entry.epoch = since.epoch
        entry.subscriptions.append(subscription)
        state.entries[key] = entry
        subscription.phase = .live
        if state.isConnected {
            _ = enqueue(entry.observeRequest(initial: false, resume: since).line,
                        .registration(entry, initialFor: nil), in: &state)
        }
        return nil
    }

    /// Stops `subscription`; nothing reaches its sink afterwards. The last
    /// subscription of an entry takes the daemon's observation with it. Does
    /// nothing for a subscription that has ended.
    func unsubscribe(_ subscription: Subscription) {
        state.withLock { state in Self.end(subscription, in: &state, core: self) }
    }

    /// Ends one subscription with the lock held.
    private static func end(_ subscription: Subscription, in state: inout State, core: ConnectionCore) {
        guard subscription.phase != .ended else { return }
        subscription.phase = .ended
        state.acks.forget(subscription)
        guard let entry = state.entries[subscription.key] else { return }
        entry.subscriptions.removeAll { $0 === subscription }
        guard entry.subscriptions.isEmpty else {
            // A kvod that does not know `update` refuses it and changes nothing: the reply is not read.
            if state.isConnected, entry.asksForMoreThanNeeded {
                _ = core.enqueue(entry.narrowingRequest().line, .discard, in: &state)
            }
            return
        }
        state.entries[subscription.key] = nil
        if state.isConnected {
            _ = core.enqueue(entry.key.request(.unobserve).line, .discard, in: &state)
        }
    }

    // MARK: Events

    /// Adds one event to `batch` for the live subscriptions of its (object, key path),
    /// or hands it to ``KVOConnection/Configuration/onUnroutedEvent`` when none asked for it.
    func route(_ event: WireEvent, _ line: UnsafeRawBufferPointer, into batch: inout DeliveryBatch) {
        let key = event.key
        // Added to the batch under the lock (no callout happens there), so no array is made per event.
        let isRouted = state.withLock { state in route(event, of: key, line, into: &batch, in: &state) }
        if !isRouted { configuration.onUnroutedEvent?(String(decoding: line, as: UTF8.self)) }
    }

    /// ``route(_:_:into:)`` with the lock held and the event's observation known;
    /// false when no observation of this connection asked for it.
    func route(_ event: WireEvent, of key: ObservationKey, _ line: UnsafeRawBufferPointer,
               into batch: inout DeliveryBatch, in state: inout State) -> Bool {
        state.latestSeq = max(state.latestSeq, event.seq)
        if event.isInitial {
            guard let initial = Self.initialEvent(event, key, in: &state) else { return false }
            for (sink, change) in initial { batch.add(change, ticket: nil, bytes: line.count, for: sink) }
            return true
        }
        guard let entry = state.routedEntry(key) else { return false }
        // A replay from before a seq read in part repeats its first events: they were delivered.
        guard entry.cursor.route(seq: event.seq, isPrior: event.isPrior) else { return true }
        // Replayed before the reply, a change counts in the epoch resumed from; live, in the registration's.
        let epoch = entry.epoch ?? state.epoch
        for subscription in entry.subscriptions
        where subscription.phase == .live && (!event.isPrior || subscription.options.contains(.prior)) {
            var ticket: AckTicket?
            if entry.delivery.acknowledges {
                // In the books before the lock goes, so no ack can pass this change unhandled.
                state.acks.delivered(event.seq, to: subscription)
                ticket = AckTicket(core: self, subscription: subscription)
            }
            batch.add(event.change(options: subscription.options, context: subscription.context, epoch: epoch),
                      ticket: ticket, bytes: line.count, for: subscription.sink)
        }
        return true
    }

    /// An initial event comes just before the reply to the `observe` that
    /// asked for it, which is therefore the oldest request awaiting. A prefix
    /// observation gets one per object under it, so its registrant stays
    /// owed initial events until the reply. Before the first reply on a
    /// socket its epoch is unknown, so the change waits for that reply.
    private static func initialEvent(_ event: WireEvent, _ key: ObservationKey,
                                     in state: inout State) -> [(any ChangeSink, Change)]? {
        guard case .registration(let entry, let registrant?)? = state.awaiting.first, entry.key == key,
              registrant.phase == .awaitingRegistration(wantsInitialEvent: true)
        else { return state.entries[key] == nil ? nil : [] }
        if !key.isPrefix { registrant.phase = .awaitingRegistration(wantsInitialEvent: false) }
        let change = event.change(options: registrant.options, context: registrant.context, epoch: state.epoch)
        guard state.epoch != nil else {
            entry.heldInitialChanges.append((registrant, change))
            return []
        }
        return [(registrant.sink, change)]
    }

    // MARK: Replies to the connection's own requests

    /// The daemon answered an entry's `observe`: its subscriptions go live, or
    /// all fail with the daemon's error.
    func registrationAnswered(_ entry: ObservationEntry, _ result: Result<JSONObject, KVOClientError>) {
        let (failed, held) = state.withLock { state -> ([Subscription], [(any ChangeSink, Change)]) in
            // What this registration asked for; a later one in flight may ask for more.
            let answered = entry.optionsInFlight.isEmpty ? entry.registeredOptions : entry.optionsInFlight.removeFirst()
            let held = entry.heldInitialChanges
            entry.heldInitialChanges.removeAll()
            guard case .failure = result else {
                entry.isRegistered = entry.optionsInFlight.isEmpty  // registered as it now should be
                if case .success(let fields) = result {
                    // Everything up to the reply's seq is before this observation or was replayed to it.
                    if let seq = fields.unsigned(.seq) {
                        entry.cursor.knowWhole(upTo: seq)
                    }
                    if case .string(let epoch)? = fields[.epoch] {
                        state.epoch = epoch
                        entry.epoch = epoch
                    }
                    if let observation = fields.unsigned(.observation) {
                        state.compactKeys[observation] = entry.key
                    }
                }
                for subscription in entry.subscriptions where ObservationEntry.options(answered, cover: subscription) {
                    if case .awaitingRegistration = subscription.phase { subscription.phase = .live }
                }
                let epoch = state.epoch
                return ([], held.compactMap { subscription, change in
                    subscription.phase == .ended ? nil : (subscription.sink, Self.change(change, epoch: epoch))
                })
            }
            // Over etcd, a kvod still catching up has not applied what the entry resumes from: with a
            // reconnect policy the connection goes and comes back later, as if the socket had broken.
            if case .failure(let error) = result, error.code == .unavailable, entry.cursor.seq != nil,
               configuration.reconnect.isEnabled, case .connected(let socket, _) = state.phase {
                state.reconnectsLater = true
                socket.shutdown()
                return ([], [])
            }
            let failed = entry.subscriptions
            for subscription in failed { subscription.phase = .ended }
            entry.subscriptions.removeAll()
            if state.entries[entry.key] === entry { state.entries[entry.key] = nil }
            return (failed, [])
        }
        for (sink, change) in held { sink.deliver(change, ticket: nil) }
        if case .failure(let error) = result {
            for subscription in failed { subscription.sink.finish(error) }
        }
    }

    private static func change(_ change: Change, epoch: String?) -> Change {
        var change = change
        change.epoch = epoch
        return change
    }

    /// A subscription's initial `get` was answered: it receives its initial
    /// change (the value, or `null` when there is none) as of the reply's
    /// `seq`, and goes live.
    func initialValueArrived(for subscription: Subscription, _ result: Result<JSONObject, KVOClientError>,
                             seq: UInt64?) {
        let outcome = state.withLock { state -> Result<Change, KVOClientError>? in
            guard subscription.phase == .awaitingInitialValue else { return nil }
            let value: JSONValue
            switch result {
            case .success(let fields): value = fields[.value] ?? .null
            case .failure(let error) where error.code == .notFound: value = .null
            case .failure(let error):
                Self.end(subscription, in: &state, core: self)
                return .failure(error)
            }
            subscription.phase = .live
            // The seq the value is as of; from an older kvod, whose get reply has none, the newest seen.
            return .success(Change(
                object: subscription.key.object, keyPath: subscription.key.keyPath, kind: .setting,
                new: subscription.options.contains(.new) ? .some(value) : .none, isInitial: true,
                seq: seq ?? state.latestSeq, context: subscription.context, epoch: state.epoch))
        }
        switch outcome {
        case .success(let change): subscription.sink.deliver(change, ticket: nil)
        case .failure(let error): subscription.sink.finish(error)
        case nil: break
        }
    }
}
