import KVOValues
import KVOProtocol

/// One page of an `observations` reply: observations in the order they were made.
public struct ObservationPage: Sendable, Hashable {
    /// The observations, oldest first.
    public var observations: [ObservationRecord]
    /// Whether more follow the last one in ``observations``.
    public var more: Bool
    /// What to pass as `after` for the next page, when ``more`` is true; an
    /// opaque cursor.
    public var next: String?

    init?(_ reply: JSONObject) {
        guard case .array(let entries)? = reply[.observations] else { return nil }
        // A kvod from before pages lists everything, without `more`.
        let more: Bool
        switch reply[.more] {
        case .bool(let flag)?: more = flag
        case nil: more = false
        default: return nil
        }
        var records: [ObservationRecord] = []
        records.reserveCapacity(entries.count)
        for entry in entries {
            guard let record = ObservationRecord(entry) else { return nil }
            records.append(record)
        }
        observations = records
        self.more = more
        switch reply[.next] {
        case .string(let cursor)?: next = cursor
        case nil: next = nil
        default: return nil
        }
        // A page that says more follow says where they start.
        guard more == (next != nil) else { return nil }
    }
}
