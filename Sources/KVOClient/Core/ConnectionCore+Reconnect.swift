import Dispatch
import KVOValues

/// What happens when a socket ends: without a reconnect policy everything
/// fails with the reason; with one, requests in flight fail, and the
/// observations are registered again on a new socket.
extension ConnectionCore {
    /// Called by the reader of `generation` when its socket ended (end of
    /// stream, read error, protocol violation, or ``close(_:)``).
    func connectionEnded(_ socket: UnixSocket, generation: Int, _ error: KVOClientError) {
        let reconnects = configuration.reconnect.isEnabled
        let (failed, ended, shouldReconnect) = state.withLock { state -> ([PendingReply], [Subscription], Bool) in
            guard case .connected(_, let current) = state.phase, current == generation else {
                return ([], [], false)  // closed already: close(_:) settled everything
            }
            let failed = Array(state.awaiting)
            state.awaiting.removeAll()
            state.deadlines.removeAll()  // while connected, every caller with a deadline is awaiting
            if reconnects {
                state.phase = .reconnecting
                state.epoch = nil  // the next socket may reach another kvod
                state.compactKeys.removeAll()  // and numbers its observations anew
                Self.prepareForRegistrationAgain(&state)
                return (failed, [], true)
            }
            state.phase = .closed(error)
            return (failed, Self.endAll(&state), false)
        }
        socket.shutdown()
        writes.sync {}  // no queued write may touch the descriptor once it is closed
        socket.close()
        for reply in failed { reply.fail(error) }
        for subscription in ended { subscription.sink.finish(error) }
        if shouldReconnect { reconnect(after: error) }
    }

    /// Connects again with backoff until it works, the policy gives up, or
    /// the connection is closed. Runs on the ended socket's reader thread.
    private func reconnect(after error: KVOClientError) {
        let policy = configuration.reconnect
        var delay = policy.initialDelay
        var attempts = 0
        var lastError = error
        let waitsFirst = state.withLock { state in
            defer { state.reconnectsLater = false }
            return state.reconnectsLater
        }
        if waitsFirst { _ = wake.wait(timeout: .now() + policy.maximumDelay.dispatchInterval) }
        while true {
            let closed = state.withLock { state in if case .closed = state.phase { true } else { false } }
            if closed { return }
            attempts += 1
            do throws(KVOClientError) {
                let socket = try UnixSocket.connect(configuration)
                resume(on: socket)
                return
            } catch {
                lastError = error
            }
            if let maximum = policy.maximumAttempts, attempts >= maximum {
                close(KVOClientError(.connectionLost,
                                     "gave up reconnecting after \(attempts) attempts: \(lastError.message)"))
                return
            }
            _ = wake.wait(timeout: .now() + delay.dispatchInterval)
            delay = min(delay * 2, policy.maximumDelay)
        }
    }

    /// Makes `socket` the connection's: the observations are registered again
    /// first, then the requests made while reconnecting go out, in order.
    private func resume(on socket: UnixSocket) {
        let generation = state.withLock { state -> Int? in
            guard case .reconnecting = state.phase else { return nil }
            state.generation += 1
            state.phase = .connected(socket, generation: state.generation)
            state.acks.restart()
            for (line, reply) in Self.registrationRequests(state) + state.backlog {
                _ = enqueue(line, reply, in: &state)
            }
            state.backlog.removeAll()
            return state.generation
        }
        guard let generation else {
            socket.close()  // closed while connecting
            return
        }
        startReading(socket, generation: generation)
    }

    /// Marks every entry unregistered; a subscription still owed the initial
    /// event of a lost `observe` will get its initial change from a `get`.
    private static func prepareForRegistrationAgain(_ state: inout State) {
        for entry in state.entries.values {
            entry.isRegistered = false
            entry.optionsInFlight.removeAll()  // those requests were lost with the socket
            for subscription in entry.subscriptions
            where subscription.phase == .awaitingRegistration(wantsInitialEvent: true) {
                subscription.phase = .awaitingInitialValue
            }
        }
    }

    /// The requests that put every observation of this connection back on a
    /// new socket: one `observe` per entry, then a `get` for each
    /// subscription still owed its initial change.
    ///
    /// An entry that was registered resumes with `since` = the seq of the last
    /// change it delivered (or of its registration) and that seq's epoch, or
    /// the seq before when it may have read only part of that seq's events
    /// (``ResumeCursor``), so kvod replays what was missed: each change
    /// arrives exactly once. If kvod no longer holds those changes
    /// (`compacted`, also after it restarted without its data, or when the
    /// seq read in part was forgotten: the rest of it cannot be known), the
    /// entry's subscriptions end with that error.
    static func registrationRequests(_ state: State) -> [(line: [UInt8], reply: PendingReply)] {
        var requests: [(line: [UInt8], reply: PendingReply)] = []
        for entry in state.entries.values {
            if entry.key.isPrefix, entry.cursor.seq == nil,
               let registrant = entry.subscriptions.first(where: { $0.phase == .awaitingInitialValue }) {
                // A prefix's initial events come only from an observe (no get can stand in for them);
                // it was never registered, so there is nothing to resume.
                registrant.phase = .awaitingRegistration(wantsInitialEvent: true)
                requests.append((entry.observeRequest(initial: true).line,
                                 .registration(entry, initialFor: registrant)))
                continue
            }
            let resume = entry.cursor.resumeSince().map { ResumePoint(seq: $0, epoch: entry.epoch) }
            requests.append((entry.observeRequest(initial: false, resume: resume).line,
                             .registration(entry, initialFor: nil)))
            for subscription in entry.subscriptions where subscription.phase == .awaitingInitialValue {
                requests.append((entry.initialValueRequest().line, .initialValue(subscription)))
            }
        }
        return requests
    }
}

extension Duration {
    /// For DispatchSemaphore's timeouts.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
