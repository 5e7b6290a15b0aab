import KVOValues

extension JSONValue {
    /// The value at `keys` under this one, following object members only; nil
    /// when a key is missing or runs into a value that is not an object. A
    /// collection operator (`tags.@count`) computes its value over the array
    /// it follows, which is then never nil.
    func value<Keys: Collection<String>>(at keys: Keys) -> JSONValue? {
        var current = self
        var index = keys.startIndex
        while index != keys.endIndex {
            let key = keys[index]
            keys.formIndex(after: &index)
            if let op = CollectionOperator(key: key) { return op.evaluate(over: current, elementPath: keys[index...]) }
            guard case .object(let members) = current, let next = members[key] else {
                return Self.computedDefault(keys[index...])
            }
            current = next
        }
        return current
    }

    /// The value at `keys` of `root`, which may be missing: nil, unless the
    /// path is computed, whose value over a missing array is defined.
    static func value<Keys: Collection<String>>(in root: JSONValue?, at keys: Keys) -> JSONValue? {
        guard let root else { return computedDefault(keys[...]) }
        return root.value(at: keys)
    }

    /// What a computed path among `rest` gives when its array is missing.
    private static func computedDefault<Keys: Collection<String>>(_ rest: Keys) -> JSONValue? {
        guard let index = rest.firstIndex(where: { CollectionOperator(key: $0) != nil }) else { return nil }
        return CollectionOperator(key: rest[index])!.evaluate(over: nil, elementPath: EmptyCollection<String>())
    }

    /// Runs `body` on this value's object members in place. Setting `self` to
    /// `.null` while `body` runs drops this enum's reference to the storage, so
    /// `body` mutates it without a copy.
    mutating func withObjectMembers<R>(_ body: (inout JSONObject) -> R) -> R? {
        guard case .object(var members) = self else { return nil }
        self = .null
        defer { self = .object(members) }
        return body(&members)
    }

    /// Runs `body` on this value's array elements in place, without a copy.
    mutating func withArrayElements<R>(_ body: (inout [JSONValue]) -> R) -> R? {
        guard case .array(var elements) = self else { return nil }
        self = .null
        defer { self = .array(elements) }
        return body(&elements)
    }
}
