/// The events a congested client is not sent yet: for each observation whose
/// policy is ``ObservationPolicy/coalesce``, only the latest one, with the
/// number of earlier ones it replaced; for a prefix observation, the latest
/// one per object.
///
/// Memory is one entry per observation (and per object, for a prefix), whatever
/// the rate of changes.
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
    /// A prefix observation's entries, by the object they are of.
    private var scopedEntries: [ObjectIdentifier: [String: Entry]] = [:]
    private var nextOrder = 0
    /// Events dropped since the client became congested, over all observations.
    private(set) var foldedCount = 0

    var isEmpty: Bool { entries.isEmpty && scopedEntries.isEmpty }
    var count: Int { entries.count + scopedEntries.values.reduce(0) { $0 + $1.count } }

    /// Keeps `prefix` as the observation's pending event (of `object`, for a
    /// prefix observation), replacing (and counting) the one held before.
    mutating func hold(_ prefix: [UInt8], seq: UInt64, for info: ObservationInfo, object: String? = nil) {
        defer { nextOrder += 1 }
        let key = ObjectIdentifier(info)
        if let object {
            if var entry = scopedEntries[key]?[object] {
                entry.prefix = prefix
                entry.seq = seq
                entry.folded += 1
                entry.order = nextOrder
                scopedEntries[key]![object] = entry
                foldedCount += 1
            } else {
                scopedEntries[key, default: [:]][object] = Entry(info: info, prefix: prefix, seq: seq, folded: 0,
                                                                 order: nextOrder)
            }
            return
        }
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
        scopedEntries[ObjectIdentifier(info)] = nil
    }

    /// Takes every held event, in the order they would have been sent: by
    /// seq, then as the change reached them.
    mutating func takeAll() -> [Entry] {
        let all = Array(entries.values) + scopedEntries.values.flatMap(\.values)
        let taken = all.sorted { ($0.seq, $0.order) < ($1.seq, $1.order) }
        entries = [:]
        scopedEntries = [:]
        foldedCount = 0
        return taken
    }
}
