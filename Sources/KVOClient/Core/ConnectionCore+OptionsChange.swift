import KVOValues
import KVOProtocol

/// Registering more options on an observation kvod already holds (kvod keeps
/// the first registration of a key path per connection): when a subscription
/// joins an entry registered without options it needs, the entry is
/// unobserved and observed again with the union of its subscriptions'
/// options at once, before any later request of the connection, so a change
/// requested afterwards reaches every subscription, the new one included.
///
/// A registered entry observes again with `since` = where its cursor stood:
/// kvod replays what changed from there, and at the `unobserve`'s reply
/// (after which only the replay and the new registration's reply come) the
/// cursor drops every replayed event it had already routed, so the
/// subscriptions already live miss nothing and see nothing twice. An entry
/// whose first registration is still in flight has nothing to resume from
/// and observes again without `since`. The joining subscription goes live at
/// the new registration's reply, or at its own `get`'s with `.initial`.
///
/// Should kvod no longer hold the changes to replay (`compacted`), the
/// entry's subscriptions end with that error, as after a reconnect.
extension ConnectionCore {
    /// `subscription` joined `entry`, whose registration lacks options it needs. Call with the lock held.
    func registerAgain(_ entry: ObservationEntry, for subscription: Subscription, in state: inout State) {
        let since = entry.isRegistered ? entry.cursor.sinceForReplay.map { ResumePoint(seq: $0, epoch: entry.epoch) }
                                       : nil
        entry.isRegistered = false
        _ = enqueue(entry.key.request(.unobserve).line, .optionsChange(entry), in: &state)
        _ = enqueue(entry.observeRequest(initial: false, resume: since).line, .registration(entry, initialFor: nil),
                    in: &state)
        if subscription.options.contains(.initial) {
            subscription.phase = .awaitingInitialValue
            _ = enqueue(entry.initialValueRequest().line, .initialValue(subscription), in: &state)
        } else {
            subscription.phase = .awaitingRegistration(wantsInitialEvent: false)
        }
    }

    /// The `unobserve` of a change of options was answered: every event of
    /// the old registration has arrived; what comes before the new one's reply is its replay.
    func optionsChangeUnobserved(_ entry: ObservationEntry) {
        state.withLock { state in
            guard state.entries[entry.key] === entry else { return }
            entry.cursor.startOverlap()
        }
    }
}
