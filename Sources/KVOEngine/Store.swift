/// The documents kvod holds, by object name, and the daemon-wide change
/// counter.
///
/// Every operation first checks everything that can fail without touching a
/// document, and only then applies itself: a request that fails changes
/// nothing. Each document is a JSON object (a key path is never empty).
public final class Store {
    private(set) var documents: [String: JSONObject] = [:]
    /// The sequence number of the last change; 0 before the first.
    public internal(set) var seq: UInt64 = 0

    public init() {}

    /// How many objects exist.
    public var objectCount: Int { documents.count }

    /// The document of `object`, or nil when there is none.
    public func document(_ object: String) -> JSONObject? {
        documents[object]
    }

    /// The value at `keys` of `object` (the whole document when `keys` is
    /// empty), or nil when there is none.
    public func value<Keys: Collection<String>>(_ object: String, at keys: Keys) -> JSONValue? {
        guard let document = documents[object] else { return nil }
        return JSONValue.object(document).value(at: keys)
    }

    // MARK: Checks (nothing changes)

    /// Follows `keys` as far as values exist, failing where a value that
    /// exists is not an object. Returns how many keys exist (all, or fewer).
    @discardableResult
    func checkObjectPath(_ object: String, _ keys: ArraySlice<String>) throws(KVOEngineError) -> Int {
        try checkedValue(object, at: keys).existingKeys
    }

    /// The position of the member `keys.last` in its parent object, when it exists.
    func memberIndex(_ object: String, at keys: ArraySlice<String>) -> Int? {
        guard let last = keys.last,
              case .object(let members)? = value(object, at: keys.dropLast()) else { return nil }
        return members.index(forKey: last)
    }

    // MARK: Restoring

    /// Replaces every document and the counter, from a saved state.
    func restore(documents: [String: JSONObject], seq: UInt64) {
        self.documents = documents
        self.seq = seq
    }

    /// ``checkObjectPath`` and ``value(_:at:)`` in one walk: the value at
    /// `keys` (nil when a key is missing) and how many leading keys exist;
    /// throws `not_an_object` where a value that exists on the way is not an
    /// object.
    func checkedValue(_ object: String,
                      at keys: ArraySlice<String>) throws(KVOEngineError) -> (value: JSONValue?, existingKeys: Int) {
        guard let document = documents[object] else { return (nil, 0) }
        var members = document
        var walked = 0
        for key in keys {
            guard let next = members[key] else { return (nil, walked) }
            walked += 1
            guard walked < keys.count else { return (next, walked) }
            guard case .object(let inner) = next else {
                let path = keys.prefix(walked).joined(separator: ".")
                throw KVOEngineError(.notAnObject, "\(object): \(path) is \(next.typeName), not an object")
            }
            members = inner
        }
        return (nil, walked)
    }

    // MARK: Mutation

    /// Puts `value` at `keys` (non-empty), creating missing intermediate
    /// objects; nil removes what is there. The caller has checked the path
    /// with ``checkObjectPath`` (and read the old value if it needs it).
    func write(_ object: String, at keys: ArraySlice<String>, _ value: JSONValue?) {
        // In place (one hash of the name, no copy of the document). Deleting
        // the last member leaves an empty object, as a set to `{}` would;
        // only `delete` without a key path removes the object.
        Self.write(into: &documents[object, default: [:]], keys, value)
    }

    private static func write(into members: inout JSONObject, _ keys: ArraySlice<String>, _ value: JSONValue?) {
        let key = keys.first!
        if keys.count == 1 {
            members[key] = value
            return
        }
        if members[key] == nil {
            guard value != nil else { return }
            members[key] = .object([:])
        }
        let index = members.index(forKey: key)!
        members.values[index].withObjectMembers { child in
            write(into: &child, keys.dropFirst(), value)
        }
    }

    /// Runs `body` on the array at `keys` in place; creates an empty array
    /// (and missing intermediates) when `create` is set and nothing is there.
    func modifyArray<R>(_ object: String, at keys: ArraySlice<String>, create: Bool,
                        _ body: (inout [JSONValue]) -> R) -> R {
        var document = documents.removeValue(forKey: object) ?? [:]
        defer { documents[object] = document }
        if create, JSONValue.object(document).value(at: keys) == nil {
            Self.write(into: &document, keys, .array([]))
        }
        return Self.modifyArray(in: &document, keys, body)
    }

    private static func modifyArray<R>(in members: inout JSONObject, _ keys: ArraySlice<String>,
                                       _ body: (inout [JSONValue]) -> R) -> R {
        let index = members.index(forKey: keys.first!)!
        if keys.count == 1 {
            return members.values[index].withArrayElements(body)!
        }
        return members.values[index].withObjectMembers { child in
            modifyArray(in: &child, keys.dropFirst(), body)
        }!
    }

    /// Removes the whole object; returns its document.
    func removeObject(_ object: String) -> JSONObject? {
        documents.removeValue(forKey: object)
    }
}
