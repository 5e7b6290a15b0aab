import KVOValues

/// Undoing a change on a value: how a replay finds what an observer of an
/// ancestor path saw, without the history keeping whole documents.
///
/// A change at `a.b.c` records the values at `a.b.c` only; an observer of `a`
/// was sent the whole of `a`, before and after. Starting from the value of `a`
/// now and undoing the object's later changes, newest first, gives the value
/// of `a` after and before each of them. Undo is exact, member order included:
/// a created member is removed (it was appended last), a removed member goes
/// back to its ``ChangeRecord/memberIndex``.
extension ChangeRecord {
    /// The value at `keyPath` before this change, given the value there after
    /// it. `keyPath` must be at, under or above the changed path. Inconsistent
    /// input (a value that this change could not have produced) gives a best
    /// effort, never a trap: restored histories come from disk.
    func valueBefore(at keyPath: [String], after: JSONValue?) -> JSONValue? {
        if createdObject { return nil }
        if keyPath.starts(with: path) {
            if kind == .setting { return old?.value(at: keyPath[path.count...]) }
            // Nothing lies under an array (keys never index arrays).
            guard keyPath.count == path.count, existingKeys == path.count,
                  case .array(var elements)? = after else { return nil }
            undoCollection(on: &elements)
            return .array(elements)
        }
        // The change is under `keyPath`: undo it inside the value.
        guard existingKeys >= keyPath.count, var value = after else { return nil }
        undoInside(&value, below: keyPath.count)
        return value
    }

    /// Turns the object's whole document after this change into the one
    /// before it, in place: a document held once is changed, not copied
    /// (a replay undoes every later change of a document this way, and a
    /// copy each cost the document's size per change).
    func undo(document: inout JSONValue?) {
        guard !createdObject, !path.isEmpty, document != nil else {
            document = valueBefore(at: [], after: document)
            return
        }
        undoInside(&document!, below: 0)
    }

    /// Undoes this change, made under the first `depth` keys of its path, in
    /// `value`, the value at those keys after it.
    private func undoInside(_ value: inout JSONValue, below depth: Int) {
        if existingKeys < path.count {
            let created = path[existingKeys]
            value.withObject(at: path[depth..<existingKeys]) { $0.removeValue(forKey: created) }
            return
        }
        let key = path[path.count - 1]
        value.withObject(at: path[depth..<(path.count - 1)]) { members in
            switch kind {
            case .setting:
                guard let old else { return }
                if new == nil {
                    let position = min(memberIndex ?? members.count, members.count)
                    _ = members.updateValue(old, forKey: key, insertingAt: position)
                } else {
                    members[key] = old
                }
            case .insertion, .removal, .replacement:
                guard let index = members.index(forKey: key) else { return }
                _ = members.values[index].withArrayElements { undoCollection(on: &$0) }
            }
        }
    }

    /// Turns the array after a collection change back into the array before
    /// it, in one pass however many indexes the change had (one `insert(at:)`
    /// or `remove(at:)` per index would cost the array's length each).
    private func undoCollection(on elements: inout [JSONValue]) {
        let previous: [JSONValue]
        if case .array(let values)? = old { previous = values } else { previous = [] }
        switch kind {
        case .insertion:
            elements.removeElements(atSortedIndexes: Self.ascending(indexes, below: elements.count))
        case .removal:
            elements = Self.merging(previous, at: indexes, into: elements)
        case .replacement:
            for (index, value) in zip(indexes, previous) where elements.indices.contains(index) {
                elements[index] = value
            }
        case .setting:
            break
        }
    }

    /// The distinct indexes in `0..<count`, ascending: what kvod recorded, or
    /// made so from a history row that was not.
    static func ascending(_ indexes: [Int], below count: Int) -> [Int] {
        let valid = indexes.filter { (0..<count).contains($0) }
        if zip(valid, valid.dropFirst()).allSatisfy({ $0 < $1 }) { return valid }
        return Array(Set(valid)).sorted()
    }

    /// `elements` with each of `values` put back at its position in `indexes`
    /// (ascending positions in the result), as inserting them one by one in
    /// that order would; a position past the end appends.
    private static func merging(_ values: [JSONValue], at indexes: [Int], into elements: [JSONValue]) -> [JSONValue] {
        var merged: [JSONValue] = []
        merged.reserveCapacity(elements.count + values.count)
        var taken = elements.startIndex
        for (index, value) in zip(indexes, values) {
            let next = min(taken + max(0, index - merged.count), elements.endIndex)
            merged.append(contentsOf: elements[taken..<next])
            taken = next
            merged.append(value)
        }
        merged.append(contentsOf: elements[taken...])
        return merged
    }
}

extension JSONValue {
    /// Runs `body` on the object at `keys` under this value, in place; does
    /// nothing when a key is missing or runs into a value that is not an object.
    mutating func withObject(at keys: ArraySlice<String>, _ body: (inout JSONObject) -> Void) {
        _ = withObjectMembers { members in
            guard let key = keys.first else { return body(&members) }
            guard let index = members.index(forKey: key) else { return }
            members.values[index].withObject(at: keys.dropFirst(), body)
        }
    }
}
