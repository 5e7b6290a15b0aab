/// The events a congested client is not sent yet: for each observation whose
/// policy is ``ObservationPolicy/coalesce``, only the latest one, with the
/// number of earlier ones it replaced.
///
/// Memory is one entry per observation, whatever the rate of changes; the
/// event bytes are shared with every other client the same change reached.
struct HeldEvents {
    struct Entry {
        let info: ObservationInfo
        /// The event's prefix, up to and including its `seq` (see ``EventEncoder``).
        var prefix: [UInt8]
        var seq: UInt64
        /// How many events of this observation were dropped for this one.
        var folded: Int
        /// Breaks ties between events of one change, which share a seq.
        var order: Int
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var nextOrder = 0
    /// Events dropped since the client became congested, over all observations.
    private(set) var foldedCount = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Keeps `prefix` as the observation's pending event, replacing (and
    /// counting) the one held before.
    mutating func hold(_ prefix: [UInt8], seq: UInt64, for info: ObservationInfo) {
        defer { nextOrder += 1 }
        let key = ObjectIdentifier(info)
        if var entry = entries[key] {
            entry.prefix = prefix
            entry.seq = seq
            entry.folded += 1
            entry.order = nextOrder
            entries[key] = entry
            foldedCount += 1
        } else {
            entries[key] = Entry(info: info, prefix: prefix, seq: seq, folded: 0, order: nextOrder)
        }
    }

    /// Forgets the observation's pending event (it was unobserved).
    mutating func drop(_ info: ObservationInfo) {
        entries[ObjectIdentifier(info)] = nil
    }

    /// Takes every held event, in the order they would have been sent: by
    /// seq, then as the change reached them.
    mutating func takeAll() -> [Entry] {
        let taken = entries.values.sorted { ($0.seq, $0.order) < ($1.seq, $1.order) }
        entries = [:]
        foldedCount = 0
        return taken
    }
}
