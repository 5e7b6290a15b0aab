/// Where one observation resumes on a new socket, exactly, even when one seq
/// covers several changes (over etcd a seq is a revision: a `batch`'s ops, a
/// connection's pipelined changes).
///
/// It remembers the newest seq routed and how many events of that seq were
/// routed. A seq known whole (a registration's reply, a resume point given by
/// the caller) resumes with `since` = it; a seq read only in part, perhaps
/// cut mid-revision, resumes with `since` = seq − 1 and drops the first
/// events of the replay with that seq, as many as were routed before: kvod
/// replays a revision's events in the order it applied and sent them, so
/// those are the same events. Nothing is missed, nothing repeated.
struct ResumeCursor: Equatable, Sendable {
    /// The newest seq routed or known whole; nil before any.
    private(set) var seq: UInt64?
    /// Events of ``seq`` routed since it was known whole; 0 when it is whole.
    private(set) var eventsAtSeq = 0
    /// While a resume's replay comes: replayed events of ``seq`` still to drop.
    private(set) var eventsToSkip = 0

    init(seq: UInt64? = nil) {
        self.seq = seq
    }

    /// Everything up to `seq` is known (a registration's reply: it was before
    /// the observation or was replayed to it).
    mutating func knowWhole(upTo seq: UInt64) {
        if let current = self.seq, current > seq { return }
        self.seq = seq
        eventsAtSeq = 0
        eventsToSkip = 0
    }

    /// One event of the entry (prior events included) with `seq` arrived:
    /// false when it is one the replay repeats, which must not be delivered.
    mutating func route(seq eventSeq: UInt64) -> Bool {
        guard let seq else {
            (self.seq, eventsAtSeq) = (eventSeq, 1)
            return true
        }
        if eventSeq == seq, eventsToSkip > 0 {
            eventsToSkip -= 1
            return false
        }
        eventsToSkip = 0  // the replay moved past what was delivered
        if eventSeq == seq {
            eventsAtSeq += 1
        } else if eventSeq > seq {
            (self.seq, eventsAtSeq) = (eventSeq, 1)
        }  // an older seq (a replay's coalesced rest, after the reply) does not move the cursor
        return true
    }

    /// The `since` for a registration on a new socket, and from now on skips
    /// the replayed events already routed. nil: nothing to resume from.
    mutating func resumeSince() -> UInt64? {
        guard let seq else { return nil }
        guard eventsAtSeq > 0, seq > 0 else {
            eventsToSkip = 0
            return seq
        }
        eventsToSkip = eventsAtSeq
        return seq - 1
    }
}
