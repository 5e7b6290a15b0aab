import KVOValues

/// What a node of a computed key path (`orders.@sum.amount`) keeps for its
/// observations: the split path; the aggregates of the arrays it has seen,
/// kept up to date from change to change while the node is observed (every
/// change of the array reaches it then), so that a change costs its own
/// elements and no pass over the array; and, between
/// ``SharedController/willChange`` and ``SharedController/didChange``, the
/// aggregate before the change being dispatched.
final class ComputedNode {
    let path: ComputedKeyPath
    /// One per object whose array changed (a prefix's node: many), dropped
    /// when the node loses its last observation.
    var aggregates: KeptAggregates
    /// The array's aggregate before the change being dispatched.
    var aggregateBefore: CollectionAggregate?
    /// Set while a collection change's value after it is still to be found.
    var awaitsNew = false

    init(_ path: ComputedKeyPath) {
        self.path = path
        aggregates = KeptAggregates(path)
    }
}

/// The aggregates of one computed key path's arrays, by object, and how they
/// follow a change: for an insert, remove or replace, from the aggregate
/// before it and the change's own elements; for a setting, from one pass over
/// the new array (unavoidable: it is new), kept for the next change. Live
/// dispatch keeps them in the node, replay its own as of each change.
///
/// An aggregate is a few counters, or for `@min`/`@max` at most
/// ``CollectionAggregate/reserveLimit`` numbers that its array holds too;
/// one is dropped when its object or array goes. Not for `@count`: an
/// array's count costs nothing.
struct KeptAggregates {
    let path: ComputedKeyPath
    /// Names compare canonically, as `String`s do.
    private var byObject: [String: CollectionAggregate] = [:]
    /// What they keep, about (``CollectionAggregate/heldBytes`` and each
    /// object's name and entry): the shared controller counts it in the
    /// memory account.
    private(set) var bytes = 0

    init(_ path: ComputedKeyPath) {
        self.path = path
    }

    mutating func removeAll() {
        byObject.removeAll()
        bytes = 0
    }

    /// Keeps `aggregate` for `object` (nil: keeps none), counting its bytes.
    private mutating func keep(_ aggregate: CollectionAggregate?, for object: String) {
        let old = if let aggregate { byObject.updateValue(aggregate, forKey: object) } else {
            byObject.removeValue(forKey: object)
        }
        if let old { bytes -= Self.entryBytes(object) + old.heldBytes }
        if let aggregate { bytes += Self.entryBytes(object) + aggregate.heldBytes }
    }

    /// An object's entry beside its aggregate: its name and the table's slot.
    private static func entryBytes(_ object: String) -> Int { 64 + object.utf8.count }

    /// The aggregate of `object`'s array when kept and of `count` elements (a
    /// count that differs would mean a change that did not come here).
    func kept(for object: String, count: Int) -> CollectionAggregate? {
        guard let aggregate = byObject[object], aggregate.count == count else { return nil }
        return aggregate
    }

    /// The aggregate of `base` (the array's value; anything else is an empty
    /// array), from one pass unless the operator is `@count`.
    func aggregate(over base: JSONValue?, reserveLimit: Int = CollectionAggregate.reserveLimit,
                   passes: inout Int) -> CollectionAggregate {
        guard case .array(let elements)? = base else {
            // No array: an empty one, which an insert may then fill.
            return CollectionAggregate(path.op, elements: [], elementPath: path.elementPath)
        }
        if path.op != .count { passes += 1 }
        return CollectionAggregate(path.op, elements: elements, elementPath: path.elementPath,
                                   reserveLimit: reserveLimit)
    }

    /// The aggregate before an insert, remove or replace of `object`'s array,
    /// `base` its value now (read only for its count when the aggregate is
    /// kept): else the array is seen for the first time, and passed over once.
    func before(_ object: String, count: Int, base: () -> JSONValue?, passes: inout Int) -> CollectionAggregate {
        kept(for: object, count: count) ?? aggregate(over: base(), passes: &passes)
    }

    /// The value after `change`, an insert, remove or replace of `object`'s
    /// array, from `before` and the change's own elements; `arrayAfter` reads
    /// the array when that is not enough (every kept extreme was removed).
    mutating func valueAfter(_ change: ChangeRecord, of object: String, before: CollectionAggregate?,
                             arrayAfter: () -> JSONValue?, passes: inout Int) -> JSONValue {
        guard var aggregate = before, let (removed, added) = change.collectionElements else {
            return self.aggregate(over: arrayAfter(), reserveLimit: 1, passes: &passes).value
        }
        if !aggregate.update(removing: removed, adding: added) {
            aggregate = self.aggregate(over: arrayAfter(), passes: &passes)
        }
        if path.op != .count { keep(aggregate, for: object) }
        return aggregate.value
    }

    /// The values before and after a setting of `object`'s array or of what
    /// holds it (`oldArray`, `newArray`: the values at the array's path):
    /// before, from the kept aggregate if any; after, from a pass over the
    /// new value, kept (none when the array, or its object, is gone).
    mutating func valuesAround(settingOf object: String, oldArray: JSONValue?, newArray: JSONValue?,
                               passes: inout Int) -> (old: JSONValue, new: JSONValue) {
        let old = kept(for: object, count: oldArray?.arrayElements?.count ?? -1)?.value
            ?? aggregate(over: oldArray, reserveLimit: 1, passes: &passes).value
        let after = aggregate(over: newArray, passes: &passes)
        keep(newArray?.arrayElements != nil && path.op != .count ? after : nil, for: object)
        return (old, after.value)
    }

    /// The keys from a changed path to the array, for a change at `changed`
    /// that lies above it.
    func arrayKeys(below changed: Int, of keyPath: [String]) -> ArraySlice<String> {
        keyPath[min(changed, path.baseCount)..<path.baseCount]
    }
}

extension JSONValue {
    /// The elements of an array; nil for any other value.
    var arrayElements: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }
}

extension ChangeRecord {
    /// The elements an insert, remove or replace of an array took out and
    /// put in; nil for a setting.
    var collectionElements: (removed: [JSONValue], added: [JSONValue])? {
        switch kind {
        case .insertion: ([], new?.arrayElements ?? [])
        case .removal: (old?.arrayElements ?? [], [])
        case .replacement: (old?.arrayElements ?? [], new?.arrayElements ?? [])
        case .setting: nil
        }
    }
}
