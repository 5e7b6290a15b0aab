import KVOValues

/// One event to one observation, as the fields that go on the wire: the one
/// place that decides what an event says. Its kind, whether it carries
/// `new`, `old`, `indexes`, `changedKeyPath`, `cause`, `resync`, `prior` or `initial`,
/// and its seq all follow from the change, where the observed key path lies
/// from the changed one, and the observation's options.
///
/// Live dispatch (``SharedController``), held events
/// (``ClientController/write(_:)``), initial events (``InitialEvents``) and
/// replay (``Replay``) all make their events here, so a change reads the same
/// to an observer however it reaches it; ``EventEncoder`` only writes the bytes.
struct ObservedChange {
    /// Where the observed key path lies from the changed one.
    enum Relation: Equatable {
        /// It is the changed path: the event has the change's own kind and indexes.
        case exact
        /// It lies above the changed path: a part of its value changed (a setting).
        case ancestor
        /// It lies `depth` keys under the changed path, which was replaced (a setting).
        case descendant(depth: Int)

        var isExact: Bool {
            if case .exact = self { return true }
            return false
        }
    }

    let kind: ChangeKind
    /// `.none` leaves the field out; `.some(nil)` writes `null` (the value is missing).
    let new: JSONValue??
    let old: JSONValue??
    /// The array positions touched: for the exact path of a collection change only.
    let indexes: [Int]?
    /// The change's key path where it is not the observed one (nil for the whole document's).
    let changedKeyPath: String?
    let cause: ChangeCause?
    let isResync: Bool
    let seq: UInt64
    let isPrior: Bool
    let isInitial: Bool

    /// An event from its fields, as they go on the wire.
    init(kind: ChangeKind, new: JSONValue??, old: JSONValue??, indexes: [Int]?, changedKeyPath: String?,
         cause: ChangeCause?, seq: UInt64, isPrior: Bool, isInitial: Bool, isResync: Bool = false) {
        self.kind = kind
        self.new = new
        self.old = old
        self.indexes = indexes
        self.changedKeyPath = changedKeyPath
        self.cause = cause
        self.isResync = isResync
        self.seq = seq
        self.isPrior = isPrior
        self.isInitial = isInitial
    }

    /// The event of `change` for an observation with `options` whose key path
    /// is related to the changed one by `relation`; `old` and `new` are the
    /// values at the observed key path. A prior event carries no `new`; an
    /// insertion no `old`, a removal no `new`.
    @inline(__always)
    init(_ change: ChangeRecord, _ relation: Relation, old: JSONValue?, new: JSONValue?,
         options: ObservationOptions, prior: Bool) {
        let exact = relation.isExact
        let kind = exact ? change.kind : .setting
        self.kind = kind
        self.new = !prior && options.contains(.new) && kind != .removal ? .some(new) : .none
        self.old = options.contains(.old) && kind != .insertion ? .some(old) : .none
        indexes = exact && kind != .setting ? change.indexes : nil
        changedKeyPath = exact ? nil : change.changedKeyPathText
        cause = change.cause
        isResync = change.isResync
        seq = change.seq
        isPrior = prior
        isInitial = false
    }

    /// The initial event of an observation with `options` (KVO's `initial`):
    /// a setting carrying the value now (`new` only if asked for) and the
    /// `observe` request's seq.
    init(initialValue value: JSONValue?, options: ObservationOptions, seq: UInt64) {
        kind = .setting
        new = options.contains(.new) ? .some(value) : .none
        old = .none
        indexes = nil
        changedKeyPath = nil
        cause = nil
        isResync = false
        self.seq = seq
        isPrior = false
        isInitial = true
    }

    /// Whether the event is the usual one: the changed path itself, set by a
    /// client, seen with `new` only and not prior. It carries kind, new and
    /// seq only, so ``EventEncoder/setting(into:head:new:seq:)`` writes it
    /// reading the change's value in place, without making the fields.
    @inline(__always)
    static func isPlainSetting(_ change: ChangeRecord, _ relation: Relation, options: ObservationOptions,
                               prior: Bool) -> Bool {
        !prior && relation.isExact && options.intersection([.new, .old]) == .new && change.kind == .setting
            && change.cause == nil && !change.isResync
    }

    /// How `keyPath` relates to the path `change` changed; nil when the change
    /// does not touch its value.
    static func relation(of keyPath: [String], to change: ChangeRecord) -> Relation? {
        if keyPath.count == change.path.count { return keyPath == change.path ? .exact : nil }
        if keyPath.starts(with: change.path) { return .descendant(depth: keyPath.count - change.path.count) }
        return change.path.starts(with: keyPath) ? .ancestor : nil
    }

    /// The values before and after `change` at `node`'s key path, for an event
    /// made after the fact (held or replayed). `valueAfter` reads the
    /// object's document as the change left it; an ancestor's old value is
    /// undone from it, and only when `wantsOld`.
    static func values(of change: ChangeRecord, at node: PathNode, _ relation: Relation, wantsOld: Bool,
                       valueAfter: ([String]) -> JSONValue?) -> (old: JSONValue?, new: JSONValue?) {
        switch relation {
        case .exact:
            return (change.old, change.new)
        case .ancestor:
            let keyPath = node.path
            let new = valueAfter(keyPath)
            return (wantsOld ? change.valueBefore(at: keyPath, after: new) : nil, new)
        case .descendant(let depth):
            if let computed = node.computed?.path {
                return computedValues(of: change, computed, keyPath: node.path, valueAfter: valueAfter)
            }
            return descendantValues(of: change, below: node.path.suffix(depth))
        }
    }

    /// The values of a key path `rest` keys under a changed path: a setting
    /// replaced them; nothing lies under an array (the collection kinds).
    static func descendantValues(of change: ChangeRecord, below rest: ArraySlice<String>)
        -> (old: JSONValue?, new: JSONValue?) {
        guard change.kind == .setting else { return (nil, nil) }
        return (change.old?.value(at: rest), change.new?.value(at: rest))
    }

    /// The values around `change` of `keyPath`, a computed key path
    /// (`tags.@count`) under the changed path: from the change's own values
    /// for a setting; for an insert, remove or replace of its array, evaluated
    /// over the array after (read by `valueAfter`) and before (undone from it).
    private static func computedValues(of change: ChangeRecord, _ computed: ComputedKeyPath, keyPath: [String],
                                       valueAfter: ([String]) -> JSONValue?) -> (old: JSONValue?, new: JSONValue?) {
        if change.kind == .setting {
            let rest = keyPath[change.path.count...]
            return (JSONValue.value(in: change.old, at: rest), JSONValue.value(in: change.new, at: rest))
        }
        // An array under an array does not exist: its value stays the empty one's.
        guard computed.baseCount == change.path.count else {
            let value = computed.evaluate(over: nil)
            return (value, value)
        }
        let arrayPath = Array(keyPath.prefix(computed.baseCount))
        let arrayAfter = valueAfter(arrayPath)
        let before = change.valueBefore(at: arrayPath, after: arrayAfter)
        return (computed.evaluate(over: before), computed.evaluate(over: arrayAfter))
    }
}
