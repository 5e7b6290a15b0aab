import KVOValues

/// A change on its way to a subscriber, with its ticket if it is to be
/// acknowledged, and about what holding it costs.
struct Delivered: Sendable {
    var change: Change
    var ticket: AckTicket?
    /// The line it came from plus the ``Change`` around it, roughly.
    var bytes: Int

    /// `bytes` nil: estimated from the change's values.
    init(change: Change, ticket: AckTicket?, bytes: Int? = nil) {
        self.change = change
        self.ticket = ticket
        self.bytes = bytes ?? Self.overhead + (change.new?.sizeEstimate ?? 0) + (change.old?.sizeEstimate ?? 0)
            + change.object.utf8.count + (change.keyPath?.utf8.count ?? 0)
    }

    /// `change` moved in, with what holding it costs.
    init(moving change: consuming Change, ticket: AckTicket?, bytes: Int) {
        self.change = change
        self.ticket = ticket
        self.bytes = bytes
    }

    /// A ``Change``'s fields, an array slot and the allocations behind them, about.
    static let overhead = 200
}

/// The changes a sink holds for a consumer that has not taken them yet,
/// bounded in bytes (``KVOConnection/Configuration/subscriberBufferLimit``).
///
/// Past the limit it folds them as kvod folds a slow reader's events
/// (docs/PROTOCOL.md, "Slow readers"): per (object, key path) only the
/// latest change is kept, in the place of the latest, and its
/// ``Change/coalesced`` counts the changes it stands for; prior changes are
/// dropped; initial changes are kept. So a consumer that falls behind gets
/// the current values and knows what it missed, and memory stays flat.
/// Folded changes count as handled for acknowledgements (the returned tickets).
///
/// For a subscriber that takes every change (``DeliveryOptions/everyChange``)
/// nothing is folded: appending throws instead (see ``append(_:)``).
struct PendingChanges {
    private(set) var changes: [Delivered] = []
    private(set) var bytes = 0
    let limit: Int
    /// The subscriber takes every change or none: past the limit it ends, it is not folded.
    let everyChange: Bool
    /// Folding again before the held bytes doubled would fold the same changes over and over.
    private var foldAt: Int

    init(limit: Int, everyChange: Bool = false) {
        self.limit = limit
        self.everyChange = everyChange
        foldAt = limit
    }

    var isEmpty: Bool { changes.isEmpty }

    /// Adds a read's changes; returns the tickets of the changes folded away.
    ///
    /// With ``everyChange``, throws `limit_exceeded` once the held bytes pass
    /// the limit (the read's changes are held, for the subscriber to take
    /// before the error), or at a change kvod coalesced (the changes before
    /// it are held, it and the rest are not).
    mutating func append(_ batch: [Delivered]) throws(KVOClientError) -> [AckTicket] {
        guard everyChange else {
            add(batch)
            return bytes > foldAt ? fold() : []
        }
        if let folded = batch.firstIndex(where: { $0.change.coalesced != nil }) {
            add(Array(batch[..<folded]))
            let change = batch[folded].change
            throw KVOClientError(.limitExceeded, "kvod coalesced \(change.coalesced ?? 0) changes of "
                                     + Self.describe(change) + " (this connection fell behind: docs/PROTOCOL.md, "
                                     + "\"Slow readers\"), and the subscriber asked for every change "
                                     + "(DeliveryOptions.everyChange)")
        }
        add(batch)
        guard bytes <= limit else {
            throw KVOClientError(.limitExceeded, "the subscriber of " + Self.describe(batch[batch.count - 1].change)
                                     + " fell behind: its changes waiting passed subscriberBufferLimit (\(limit) "
                                     + "bytes), and it asked for every change (DeliveryOptions.everyChange)")
        }
        return []
    }

    private mutating func add(_ batch: [Delivered]) {
        if changes.isEmpty { changes = batch } else { changes += batch }
        for delivered in batch { bytes += delivered.bytes }
    }

    /// `person/1 name`, `services/db addr (prefix services/)`: for messages.
    private static func describe(_ change: Change) -> String {
        change.object + " " + (change.keyPath ?? "(whole document)") + (change.prefix.map { " (prefix \($0))" } ?? "")
    }

    /// Everything held, oldest first; empties the buffer.
    mutating func takeAll() -> [Delivered] {
        defer {
            changes = []
            bytes = 0
            foldAt = limit
        }
        return changes
    }

    private struct FoldKey: Hashable {
        var object: String
        var keyPath: String?
        var prefix: String?
    }

    private mutating func fold() -> [AckTicket] {
        var kept: [Delivered?] = []
        kept.reserveCapacity(changes.count)
        var latest: [FoldKey: Int] = [:]
        var tickets: [AckTicket] = []
        for var delivered in changes {
            let change = delivered.change
            if change.isPrior {
                if let ticket = delivered.ticket { tickets.append(ticket) }
                continue
            }
            if !change.isInitial {
                let key = FoldKey(object: change.object, keyPath: change.keyPath, prefix: change.prefix)
                if let position = latest[key], let previous = kept[position] {
                    delivered.change.coalesced = (change.coalesced ?? 0) + 1 + (previous.change.coalesced ?? 0)
                    if let ticket = previous.ticket { tickets.append(ticket) }
                    kept[position] = nil
                }
                latest[key] = kept.count
            }
            kept.append(delivered)
        }
        changes = kept.compactMap { $0 }
        bytes = changes.reduce(0) { $0 + $1.bytes }
        foldAt = max(limit, 2 * bytes)
        return tickets
    }
}
