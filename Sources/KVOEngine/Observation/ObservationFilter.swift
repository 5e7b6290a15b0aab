import KVOValues

/// Which events of an observation are sent (issue 15's quiet observers):
/// `distinct` drops events whose value did not change, `kinds` keeps only
/// the listed kinds, `throttle` sends at most one event per interval (the
/// rest folded into it). The default sends every event, as KVO does.
public struct ObservationFilter: Sendable, Hashable {
    /// Send an event only when the value at the observed key path changed
    /// (new ≠ old as JSON, numbers by value, members in any order).
    public var distinct: Bool
    /// The kinds sent, by bit (``ChangeKind/filterBit``); nil: every kind.
    private var kindBits: UInt8?
    /// At most one event per this many milliseconds; nil: no throttle.
    public var throttle: UInt32?
    /// Whether its client acknowledges its events (`ack` in `observe`):
    /// drops nothing, but a writer's `await acknowledged` waits for it.
    public var acknowledges = false

    public init(distinct: Bool = false, kinds: [ChangeKind]? = nil, throttle: UInt32? = nil,
                acknowledges: Bool = false) {
        self.distinct = distinct
        kindBits = kinds.map { $0.reduce(0) { $0 | $1.filterBit } }
        self.throttle = throttle
        self.acknowledges = acknowledges
    }

    /// Every event goes out.
    public static let none = ObservationFilter()

    /// Whether it drops anything at all.
    public var isQuiet: Bool { distinct || kindBits != nil || throttle != nil }

    /// Whether an observation must keep it (in its side object): it drops
    /// something or acknowledges.
    var needsKeeping: Bool { isQuiet || acknowledges }

    /// The kinds sent, in KVO's order; nil: every kind.
    public var kinds: [ChangeKind]? {
        guard let kindBits else { return nil }
        return ChangeKind.allCases.filter { kindBits & $0.filterBit != 0 }
    }

    /// Whether an event of `kind` (as this observation sees it) goes out;
    /// `changed` says whether the value at its key path changed, and is
    /// only asked when it matters.
    func passes(kind: ChangeKind, changed: () -> Bool) -> Bool {
        if let kindBits, kindBits & kind.filterBit == 0 { return false }
        return !distinct || changed()
    }
}

extension ChangeKind: CaseIterable {
    public static let allCases: [ChangeKind] = [.setting, .insertion, .removal, .replacement]

    var filterBit: UInt8 {
        switch self {
        case .setting: 1
        case .insertion: 2
        case .removal: 4
        case .replacement: 8
        }
    }
}

extension ChangeRecord {
    /// Whether this change changed the value at its own path (and so at
    /// every path above it): a setting to an equal value did not, nor a
    /// replacement by equal elements.
    var changesValue: Bool {
        switch kind {
        case .insertion, .removal: true
        case .setting, .replacement:
            valuesDiffer(old, new)
        }
    }
}

/// Whether two values at a key path differ as JSON (a missing value differs from any).
func valuesDiffer(_ old: JSONValue?, _ new: JSONValue?) -> Bool {
    switch (old, new) {
    case (nil, nil): false
    case (let before?, let after?): !before.isEquivalent(to: after)
    default: true
    }
}
