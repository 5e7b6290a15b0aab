/// How many change events the engine made for observers, and how many of
/// those a congested client never got as such: what the `metrics` op reports.
/// Plain integers on the loop's thread; counted per node of a change, not
/// per event, so that counting costs the fan-out nothing it can measure.
public struct EventCounts: Sendable, Equatable {
    /// Change events made for observers (sent, or held for a congested
    /// client), by the change's kind; initial and replayed events not included.
    public var settings = 0
    public var insertions = 0
    public var removals = 0
    public var replacements = 0
    /// Held events replaced by a later one for the same observation (and
    /// object): the sum of the `coalesced` counts events carry or will carry.
    public var coalesced = 0
    /// Events a congested client never gets: prior events (not kept while
    /// congested), the held events of a client that closed or was
    /// disconnected, and those of a prefix observation's object that came
    /// and went while its client was behind.
    public var dropped = 0

    /// The count of events of `kind`.
    public subscript(kind: ChangeKind) -> Int {
        switch kind {
        case .setting: settings
        case .insertion: insertions
        case .removal: removals
        case .replacement: replacements
        }
    }

    mutating func add(_ events: Int, of kind: ChangeKind) {
        switch kind {
        case .setting: settings += events
        case .insertion: insertions += events
        case .removal: removals += events
        case .replacement: replacements += events
        }
    }
}
