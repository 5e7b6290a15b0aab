/// Where one observation resumes on a new socket, exactly, even when one seq
/// covers several changes (over etcd a seq is a revision: a `batch`'s ops, a
/// connection's pipelined changes).
///
/// It remembers the newest seq routed and how many changes and prior events
/// of that seq were routed. A seq known whole (a registration's reply, a
/// resume point given by the caller) resumes with `since` = it; a seq read
/// only in part, perhaps cut mid-revision, resumes with `since` = seq − 1 and
/// drops the first events of the replay with that seq, as many as were
/// routed before: kvod replays a revision's events in the order it applied
/// and sent them, so those are the same events. Changes and prior events are
/// counted apart, and a prior event is dropped while changes are, so that a
/// registration that added or dropped `prior` (ConnectionCore+OptionsChange.swift)
/// resumes as exactly. Nothing is missed, nothing repeated.
struct ResumeCursor: Equatable, Sendable {
    /// The newest seq routed or known whole; nil before any.
    private(set) var seq: UInt64?
    /// Changes (not prior events) of ``seq`` routed since it was known whole; 0 when it is whole.
    private(set) var eventsAtSeq = 0
    /// Prior events of ``seq`` routed since it was known whole.
    private(set) var priorsAtSeq = 0
    /// While a resume's replay comes: replayed changes of ``seq`` still to drop.
    private(set) var eventsToSkip = 0
    /// While a resume's replay comes: replayed prior events of ``seq`` still to drop.
    private(set) var priorsToSkip = 0
    /// While a replay that starts before ``seq`` comes (``startOverlap()``): events of older seqs are dropped too.
    private(set) var dropsOlder = false
    /// With ``dropsOlder``: ``seq`` was whole when the overlap started, so its replayed events are dropped too.
    private(set) var dropsSeq = false

    init(seq: UInt64? = nil) {
        self.seq = seq
    }

    /// Everything up to `seq` is known (a registration's reply: it was before
    /// the observation or was replayed to it).
    mutating func knowWhole(upTo seq: UInt64) {
        if let current = self.seq, current > seq { return }
        self.seq = seq
        (eventsAtSeq, priorsAtSeq, eventsToSkip, priorsToSkip) = (0, 0, 0, 0)
        (dropsOlder, dropsSeq) = (false, false)
    }

    /// One event of the entry with `seq` arrived (`isPrior`: a prior event):
    /// false when it is one the replay repeats, which must not be delivered.
    mutating func route(seq eventSeq: UInt64, isPrior: Bool = false) -> Bool {
        guard let seq else {
            self.seq = eventSeq
            (eventsAtSeq, priorsAtSeq) = isPrior ? (0, 1) : (1, 0)
            return true
        }
        if dropsOlder, eventSeq < seq || (eventSeq == seq && dropsSeq) { return false }
        if eventSeq == seq, eventsToSkip > 0 || priorsToSkip > 0 {
            if isPrior {
                // A prior event comes before its change: while changes are dropped, so is it.
                if priorsToSkip > 0 || eventsToSkip > 0 {
                    priorsToSkip = max(0, priorsToSkip - 1)
                    return false
                }
            } else if eventsToSkip > 0 {
                eventsToSkip -= 1
                return false
            }
        }
        // The replay moved past what was delivered.
        (eventsToSkip, priorsToSkip, dropsOlder, dropsSeq) = (0, 0, false, false)
        if eventSeq == seq {
            if isPrior { priorsAtSeq += 1 } else { eventsAtSeq += 1 }
        } else if eventSeq > seq {
            self.seq = eventSeq
            (eventsAtSeq, priorsAtSeq) = isPrior ? (0, 1) : (1, 0)
        }  // an older seq (a replay's coalesced rest, after the reply) does not move the cursor
        return true
    }

    /// The `since` that replays from here on, as ``resumeSince()`` gives it, without skipping anything yet.
    var sinceForReplay: UInt64? {
        guard let seq else { return nil }
        return eventsAtSeq + priorsAtSeq > 0 && seq > 0 ? seq - 1 : seq
    }

    /// A replay is coming that starts at or before this point (a `since`
    /// taken earlier, while events were still arriving): from now on, drop
    /// the replayed events up to here, those of older seqs included, until an
    /// event past it arrives or a registration's reply says where things stand.
    mutating func startOverlap() {
        guard seq != nil else { return }
        (eventsToSkip, priorsToSkip, dropsOlder) = (eventsAtSeq, priorsAtSeq, true)
        dropsSeq = eventsAtSeq + priorsAtSeq == 0
    }

    /// The `since` for a registration on a new socket, and from now on skips
    /// the replayed events already routed. nil: nothing to resume from.
    mutating func resumeSince() -> UInt64? {
        let since = sinceForReplay
        // From the seq before, the replay repeats what was routed of this one (no seq: nothing to skip).
        (eventsToSkip, priorsToSkip) = since == seq ? (0, 0) : (eventsAtSeq, priorsAtSeq)
        return since
    }
}
