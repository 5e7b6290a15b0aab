/// The documents kvod holds, by object name, and the daemon-wide change
/// counter.
///
/// Every operation first checks everything that can fail without touching a
/// document, and only then applies itself: a request that fails changes
/// nothing. Each document is a JSON object (a key path is never empty).
public final class Store {
    /// One object's members, boxed: a request hashes the object's name once,
    /// when it finds the box, and then reads and changes the members in place.
    final class Document {
        var members: JSONObject
        init(_ members: JSONObject) { self.members = members }
    }

    private var boxes: [String: Document] = [:]
    /// The sequence number of the last change; 0 before the first.
    public internal(set) var seq: UInt64 = 0

    public init() {}

    /// Every document, by object name.
    var documents: [String: JSONObject] { boxes.mapValues(\.members) }

    /// How many objects exist.
    public var objectCount: Int { boxes.count }

    /// The document of `object`, or nil when there is none.
    public func document(_ object: String) -> JSONObject? {
        boxes[object]?.members
    }

    /// The value at `keys` of `object` (the whole document when `keys` is
    /// empty), or nil when there is none.
    public func value<Keys: Collection<String>>(_ object: String, at keys: Keys) -> JSONValue? {
        guard let document = boxes[object] else { return nil }
        return JSONValue.object(document.members).value(at: keys)
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
        boxes = documents.mapValues(Document.init)
        self.seq = seq
    }

    /// Where a checked write goes: the object's document, when it exists,
    /// and the position of a one-key path's member in it, when that exists,
    /// so that the write hashes neither the name nor the key again.
    struct Target {
        fileprivate let document: Document?
        fileprivate let memberIndex: Int?
    }

    /// ``checkObjectPath`` and ``value(_:at:)`` in one walk: the value at
    /// `keys` (nil when a key is missing), how many leading keys exist, and
    /// where to write; throws `not_an_object` where a value that exists on the
    /// way is not an object.
    func checkedValue(_ object: String, at keys: ArraySlice<String>) throws(KVOEngineError)
        -> (value: JSONValue?, existingKeys: Int, target: Target) {
        guard let document = boxes[object] else { return (nil, 0, Target(document: nil, memberIndex: nil)) }
        if keys.count == 1 {
            guard let index = document.members.index(forKey: keys[keys.startIndex]) else {
                return (nil, 0, Target(document: document, memberIndex: nil))
            }
            return (document.members.values[index], 1, Target(document: document, memberIndex: index))
        }
        let target = Target(document: document, memberIndex: nil)
        var members = document.members
        var walked = 0
        for key in keys {
            guard let next = members[key] else { return (nil, walked, target) }
            walked += 1
            guard walked < keys.count else { return (next, walked, target) }
            guard case .object(let inner) = next else {
                let path = keys.prefix(walked).joined(separator: ".")
                throw KVOEngineError(.notAnObject, "\(object): \(path) is \(next.typeName), not an object")
            }
            members = inner
        }
        return (nil, walked, target)
    }

    // MARK: Mutation

    /// Puts `value` at `keys` (non-empty), creating missing intermediate
    /// objects; nil removes what is there. The caller has checked the path
    /// with ``checkObjectPath`` (and read the old value if it needs it).
    func write(_ object: String, at keys: ArraySlice<String>, _ value: JSONValue?) {
        // In place (one hash of the name, no copy of the document). Deleting
        // the last member leaves an empty object, as a set to `{}` would;
        // only `delete` without a key path removes the object.
        guard let document = boxes[object] else {
            guard value != nil else { return }
            var members: JSONObject = [:]
            Self.write(into: &members, keys, value)
            boxes[object] = Document(members)
            return
        }
        Self.write(into: &document.members, keys, value)
    }

    /// ``write(_:at:_:)`` to where ``checkedValue(_:at:)`` found the path,
    /// nothing having changed the store in between.
    func write(_ object: String, at keys: ArraySlice<String>, _ value: JSONValue, to target: Target) {
        guard let document = target.document else { return write(object, at: keys, value) }
        if let index = target.memberIndex {
            document.members.values[index] = value
        } else {
            Self.write(into: &document.members, keys, value)
        }
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
        let document: Document
        if let existing = boxes[object] {
            document = existing
        } else {
            document = Document([:])
            boxes[object] = document
        }
        if create, JSONValue.object(document.members).value(at: keys) == nil {
            Self.write(into: &document.members, keys, .array([]))
        }
        return Self.modifyArray(in: &document.members, keys, body)
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
        boxes.removeValue(forKey: object)?.members
    }
}
