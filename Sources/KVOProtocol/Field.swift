/// The member names of requests, replies and events (docs/PROTOCOL.md).
///
/// One name per spelling: `seq` is a request's (`ack`), a reply's and an
/// event's, `eventsSent` is `info`'s and an `observations` entry's. The
/// members of `info`'s nested objects are ``InfoFigure``'s.
public enum Field: String, CaseIterable, Sendable, MemberName {
    // Every request, and its reply.

    /// The operation a request asks for (``Op``).
    case op
    /// Any JSON value a request carries, echoed in its reply.
    case id
    /// A reply's outcome: `true`, or `false` with ``error``.
    case ok
    /// A failed reply's error object: ``code``, ``message`` and details.
    case error
    /// An error's machine-readable part (``ErrorCode``).
    case code
    /// An error's text, for people.
    case message

    // What a request names.

    /// The object a request or event is about.
    case object
    /// A key path within the object; absent: the whole document.
    case keyPath
    /// Several key paths of one observe or unobserve.
    case keyPaths
    /// The prefix of a prefix observation or a `list`.
    case prefix
    /// A value: what `set` stores, `insert` adds, `get` returns.
    case value
    /// Several values of one `insert` or `replace`.
    case values
    /// One array index.
    case index
    /// Array indexes: a request's, or a collection event's.
    case indexes
    /// The change requests of a `batch`.
    case ops
    /// A `list` or `observations` page starts after this.
    case after
    /// The most a `list` or `observations` page holds.
    case limit
    /// The integer an `add` adds.
    case by
    /// Where a `backup` chunk starts, in bytes.
    case offset

    // Conditions, lifetimes and waits of a change.

    /// The change applies only if the value's modSeq is this.
    case ifModSeq
    /// The change applies only if the value is this.
    case ifValue
    /// The value lives as long as the connection that set it.
    case ephemeral
    /// The value lives this many seconds.
    case ttl
    /// The reply waits until the change is `written` or `acknowledged`.
    case await
    /// How long `await` waits, in milliseconds.
    case awaitTimeout

    // What an observe asks for.

    /// The observation's options: `new`, `old`, `initial`, `prior`.
    case options
    /// Any JSON value, repeated on each of the observation's events.
    case context
    /// Replay the changes after this seq.
    case since
    /// The history a `since` belongs to; also in `observe`'s reply.
    case epoch
    /// What a slow reader gets: `coalesce` or `disconnect`.
    case policy
    /// Only changes that change the value.
    case distinct
    /// Only changes of these kinds.
    case kinds
    /// At most one event per this many milliseconds.
    case throttle
    /// The observation acknowledges its events.
    case ack
    /// The observation's events come in the compact form, naming it by ``observation``.
    case compact
    /// `observe` replaces the options of a key path the connection already observes.
    case update

    // Replies.

    /// The seq a reply or event reflects; the seq an `ack` acknowledges.
    case seq
    /// Each op's seq in a `batch`'s reply.
    case seqs
    /// A value's modification seq, in `get`'s reply and some errors.
    case modSeq
    /// Seconds left of an ephemeral value, in `get`'s reply.
    case expiresIn
    /// The object names of a `list` page.
    case objects
    /// Whether a page has a next one.
    case more
    /// What to pass as `after` for the next `observations` page.
    case next
    /// A page of `observations`.
    case observations
    /// `metrics`' text.
    case text
    /// A `backup`'s size in bytes.
    case size
    /// A `backup` chunk's bytes, in base64.
    case data
    /// How many observations an awaited change reached.
    case observers
    /// How many of them acknowledged it.
    case acknowledged
    /// The oldest seq kvod holds changes after, in `compacted` and `info`.
    case oldestSeq
    /// Over etcd: this kvod is behind the cluster, in reads' replies and errors.
    case stale

    // `info`'s figures (its nested objects' members are ``InfoFigure``'s).

    /// kvod's version.
    case version
    /// The commit kvod was built from.
    case commit
    /// Seconds since kvod started.
    case uptime
    /// How many connections are open.
    case connections
    /// Over etcd: the cluster's state (``InfoFigure/Cluster``).
    case cluster
    /// The memory account and its limit (``InfoFigure/Memory``).
    case memory
    /// The connections' buffers and their limit (``InfoFigure/Memory``).
    case clientMemory
    /// How many changes the history holds.
    case historyChanges
    /// Events sent: by kvod in `info`, to one observation in an `observations` entry.
    case eventsSent
    /// Events coalesced away: by kvod in `info`, for one observation in an `observations` entry.
    case eventsCoalesced
    /// How many connections have events coalesced now.
    case coalescingConnections
    /// What limits refused (``InfoFigure/Refused``).
    case refused
    /// With `--data-dir`: the disk's room to write (``InfoFigure/Storage``).
    case storage
    /// The event loop's lag in its last turn, in milliseconds.
    case loopLagLastMs
    /// The event loop's longest lag since the previous `info`, in milliseconds.
    case loopLagMaxMs
    /// The event loop's longest lag since kvod started, in milliseconds.
    case loopLagPeakMs
    /// The CPU time of the event loop's last turn, in milliseconds.
    case loopCpuLastMs
    /// The CPU time of the longest turn since the previous `info`, in milliseconds.
    case loopCpuMaxMs
    /// The CPU time of the longest turn since kvod started, in milliseconds.
    case loopCpuPeakMs
    /// How many turns the event loop made.
    case loopTurns

    // An `observations` entry's figures (beside the members of its `observe`).

    /// The seq of the last event sent to the observation.
    case lastSeqSent
    /// The last seq the connection acknowledged, for an `ack` observation.
    case lastAckedSeq

    // Events.

    /// What an event line is (``EventType``).
    case event
    /// The kind of change (``EventKind``).
    case kind
    /// The event comes before the change is applied.
    case prior
    /// The event tells the value an observation started with.
    case initial
    /// The value after the change.
    case new
    /// The value before the change.
    case old
    /// The key path the change was made at, when not the observed one.
    case changedKeyPath
    /// Why kvod removed the value (``EventCause``).
    case cause
    /// Over etcd: the event brings an observer up to the current value after
    /// the changes between were compacted away (docs/PROTOCOL.md, "Over etcd").
    case resync
    /// How many earlier events this one stands for.
    case coalesced
    /// A compact observation's number: in `observe`'s reply and `observations`,
    /// and the first member of each of its events in place of `event`,
    /// `object`, `prefix` and `keyPath` (docs/PROTOCOL.md, "Compact events").
    case observation = "o"
}
