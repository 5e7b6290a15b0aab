extension JSONValue {
    /// The value at `keys` under this one, following object members only; nil
    /// when a key is missing or runs into a value that is not an object.
    func value<Keys: Collection<String>>(at keys: Keys) -> JSONValue? {
        var current = self
        for key in keys {
            guard case .object(let members) = current, let next = members[key] else { return nil }
            current = next
        }
        return current
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
