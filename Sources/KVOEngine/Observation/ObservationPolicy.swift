/// What happens to an observation's events while its client does not keep up
/// (its connection is congested: more output waits than the daemon allows).
///
/// Chosen per observation with `"policy"` on `observe`; see docs/PROTOCOL.md.
public enum ObservationPolicy: String, Sendable, CaseIterable {
    /// Keep only the latest event of the observation; when the client catches
    /// up it gets that event with `"coalesced":N`, N being how many events
    /// were dropped in its favour. The connection stays open.
    case coalesce
    /// Close the connection (as Redis does with slow subscribers): for
    /// clients to whom a missed event is worse than a reconnect.
    case disconnect

    /// `coalesce`: a KVO event describes state, so the latest one supersedes
    /// the ones before it, and a slow reader keeps its connection and
    /// converges to the current values instead of losing everything.
    public static let `default` = ObservationPolicy.coalesce
}
