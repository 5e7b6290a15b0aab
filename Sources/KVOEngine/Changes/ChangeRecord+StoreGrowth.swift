import KVOValues

/// How a change moves the store's size estimate (``Store/sizeEstimate``):
/// worked out from the record alone, so that the total follows every change
/// without walking a document. The sum of these growths over a store's
/// changes equals the estimate of its documents walked afresh
/// (`StoreSizeEstimateTests` checks it on random changes).
extension ChangeRecord {
    /// The bytes `--max-memory` counts for the document of an object named
    /// `object`, besides its JSON: the name and the table entry that holds it.
    static func documentOverhead(_ object: String) -> Int { object.utf8.count + 64 }

    /// How many bytes the store's estimate grows by when this change is
    /// applied; negative when it shrinks.
    public var storeGrowth: Int {
        var growth = createdObject ? Self.documentOverhead(object) + 2 : 0
        switch kind {
        case .setting where path.isEmpty:
            switch (old, new) {
            case (nil, _?): growth = Self.documentOverhead(object) + newSize
            case (_?, nil): growth = -(Self.documentOverhead(object) + oldSize)
            default: growth = newSize - oldSize
            }
        case .setting:
            if new != nil {
                growth += old == nil ? createdChainSize + newSize : newSize - oldSize
            } else if old != nil {
                growth -= JSONValue.memberOverhead(path[path.count - 1]) + oldSize
            }
        case .insertion:
            // An array made where none was: its chain of members, and `[]`.
            if existingKeys < path.count { growth += createdChainSize + 2 }
            growth += newSize - 2
        case .removal:
            growth -= oldSize - 2
        case .replacement:
            growth += newSize - oldSize
        }
        return growth
    }

    /// The members this change creates on its way to the value, from
    /// `path[existingKeys]` on, and the objects between them, the value aside.
    private var createdChainSize: Int {
        // Clamped: a record read back from disk might say anything.
        let first = min(max(existingKeys, 0), path.count)
        var size = 2 * max(0, path.count - 1 - first)
        for key in path[first...] { size += JSONValue.memberOverhead(key) }
        return size
    }
}
