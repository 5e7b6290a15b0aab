import KVOValues

/// Applying a change again to a document: how a replay walks the history
/// forwards, from the document as it was at the resume point (found by
/// undoing, ``valueBefore(at:after:)``) through each change, keeping one
/// document per object instead of one value per event, changed in place.
///
/// It does what the store did: a set appends a new member or replaces one in
/// place, creating missing intermediate objects; a delete removes the member;
/// the collection kinds insert, remove or replace elements at their indexes.
/// Inconsistent input (a restored history that does not fit the document)
/// gives a best effort, never a trap.
extension ChangeRecord {
    /// Applies this change to `document`, the object's whole document before
    /// it (nil: none), in place.
    func apply(to document: inout JSONValue?) {
        guard !path.isEmpty else {
            document = new
            return
        }
        if case .object? = document {} else { document = .object([:]) }
        _ = document!.withObjectMembers { apply(to: &$0) }
    }

    /// Applies this change, at a non-empty key path, to its object's members
    /// in place: also how the store applies a delete, insert, remove or replace.
    func apply(to members: inout JSONObject) {
        let keys = path[...]
        switch kind {
        case .setting:
            Store.write(into: &members, keys, new)
        case .insertion:
            if JSONValue.object(members).value(at: keys) == nil { Store.write(into: &members, keys, .array([])) }
            let values = Self.elements(of: new)
            Self.withArray(at: keys, in: &members) { array in
                let position = min(indexes.first ?? array.count, array.count)
                array.insert(contentsOf: values, at: position)
            }
        case .removal:
            Self.withArray(at: keys, in: &members) { array in
                array.removeElements(atSortedIndexes: Self.ascending(indexes, below: array.count))
            }
        case .replacement:
            let values = Self.elements(of: new)
            Self.withArray(at: keys, in: &members) { array in
                for (index, value) in zip(indexes, values) where index < array.count { array[index] = value }
            }
        }
    }

    private static func elements(of value: JSONValue?) -> [JSONValue] {
        if case .array(let elements)? = value { return elements }
        return []
    }

    /// Runs `body` on the array at `keys`, in place; nothing when there is none.
    private static func withArray(at keys: ArraySlice<String>, in members: inout JSONObject,
                                  _ body: (inout [JSONValue]) -> Void) {
        guard let index = members.index(forKey: keys.first!) else { return }
        if keys.count == 1 {
            _ = members.values[index].withArrayElements(body)
            return
        }
        _ = members.values[index].withObjectMembers { withArray(at: keys.dropFirst(), in: &$0, body) }
    }
}
