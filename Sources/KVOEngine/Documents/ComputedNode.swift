/// What a node of a computed key path (`orders.@sum.amount`) keeps for its
/// observations: the split path; between ``SharedController/willChange``
/// and ``SharedController/didChange`` the aggregate of the array before an
/// insert, remove or replace, so that the value after it comes from the
/// change's elements instead of a second pass over the array; and, for an
/// object's tree, the aggregate after it, kept up to date from change to
/// change while the node is observed (every change of the array reaches it
/// then), so that the next change makes no pass at all.
final class ComputedNode {
    let path: ComputedKeyPath
    /// The array's aggregate now, while it is known without a pass. Dropped
    /// when the array is set as a whole, and when the node gains an
    /// observation (changes made while it had none did not reach it).
    var maintained: CollectionAggregate?
    /// The array's aggregate before the change being dispatched, when the
    /// operator needs one (not `@count`: an array's count costs nothing).
    var aggregateBefore: CollectionAggregate?
    /// Set while a collection change's value after it is still to be found.
    var awaitsNew = false

    init(_ path: ComputedKeyPath) {
        self.path = path
    }

    /// The value after `change` (an insert, remove or replace of this node's
    /// array): from the aggregate before it and the change's elements when
    /// that is exact, else from `after`, a pass over the array now.
    func valueAfter(_ change: ChangeRecord, after: () -> JSONValue?) -> JSONValue? {
        defer {
            aggregateBefore = nil
            awaitsNew = false
        }
        guard let before = aggregateBefore else { return after() }
        let removed: [JSONValue]
        let added: [JSONValue]
        switch change.kind {
        case .insertion: (removed, added) = ([], change.new?.arrayElements ?? [])
        case .removal: (removed, added) = (change.old?.arrayElements ?? [], [])
        case .replacement: (removed, added) = (change.old?.arrayElements ?? [], change.new?.arrayElements ?? [])
        case .setting: return after()
        }
        guard let updated = before.updated(removing: removed, adding: added, for: path.op) else {
            maintained = nil
            return after()
        }
        maintained = updated
        return updated.value(of: path.op)
    }
}

extension JSONValue {
    /// The elements of an array; nil for any other value.
    var arrayElements: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }
}
