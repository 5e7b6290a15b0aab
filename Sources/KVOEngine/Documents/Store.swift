import KVOValues

/// The documents kvod holds, by object name, and the daemon-wide change
/// counter.
///
/// Every operation first checks everything that can fail without touching a
/// document, and only then applies itself: a request that fails changes
/// nothing. Each document is a JSON object (a key path is never empty).
public final class Store {
    /// The documents, in entries shared with the shared controller: a request
    /// hashes the object's name once, and reads and changes the members in place.
    let objects: ObjectTable
    /// The sequence number of the last change; 0 before the first.
    @exclusivity(unchecked) public internal(set) var seq: UInt64 = 0
    /// About how many bytes the documents take: each one's compact JSON
    /// (``JSONValue/sizeEstimate``), name and entry. Kept up to date by the
    /// engine from each change's ``ChangeRecord/storeGrowth``; what
    /// `--max-memory` counts for the documents.
    @exclusivity(unchecked) public internal(set) var sizeEstimate = 0

    init(objects: ObjectTable) {
        self.objects = objects
    }

    /// Every document, by object name.
    var documents: [String: JSONObject] { objects.documents }

    /// How many objects exist.
    public var objectCount: Int { objects.documentCount }

    /// The document of `object`, or nil when there is none.
    public func document(_ object: String) -> JSONObject? {
        objects.entry(object)?.members
    }

    /// The value at `keys` of `object` (the whole document when `keys` is
    /// empty), or nil when there is none.
    public func value<Keys: Collection<String>>(_ object: String, at keys: Keys) -> JSONValue? {
        guard let members = objects.entry(object)?.members else { return JSONValue.value(in: nil, at: keys) }
        return JSONValue.object(members).value(at: keys)
    }

    /// The modSeq of the value at `keys` of `object`: the seq of the last
    /// change at or under it; 0 when there is no value there.
    public func modSeq<Keys: Collection<String>>(_ object: String, at keys: Keys) -> UInt64 {
        guard let entry = objects.entry(object), let members = entry.members,
              JSONValue.object(members).value(at: keys) != nil else { return 0 }
        return entry.modSeqs.modSeq(at: ArraySlice(keys))
    }

    /// The modSeqs of `object`'s document, while it has one.
    public func modSeqs(_ object: String) -> ModSeqTree? {
        guard let entry = objects.entry(object), entry.members != nil else { return nil }
        return entry.modSeqs
    }

    /// Records an applied change in its document's modSeqs. `entry` is the
    /// object's, when the caller has it at hand.
    func recordModSeq(of change: ChangeRecord, in entry: ObjectTable.Entry? = nil) {
        guard let entry = entry ?? objects.entry(change.object), entry.members != nil else { return }
        if change.path.count == 1, change.kind == .setting, change.new != nil, !change.createdObject {
            return objects.recordSet(ofMember: change.path[0], at: change.seq, in: entry)
        }
        if change.createdObject || change.path.isEmpty {
            entry.modSeqs = ModSeqTree(madeAt: change.seq)
        }
        entry.modSeqs.record(change)
    }

    // MARK: Checks (nothing changes)

    /// The position of the member `keys.last` in its parent object, when it exists.
    func memberIndex(_ object: String, at keys: ArraySlice<String>) -> Int? {
        guard let last = keys.last,
              case .object(let members)? = value(object, at: keys.dropLast()) else { return nil }
        return members.index(forKey: last)
    }

    // MARK: Restoring

    /// Replaces every document and the counter, from a saved state, with
    /// the documents' modSeqs (a document without any counts as changed at `seq`).
    func restore(documents: [String: JSONObject], seq: UInt64, modSeqs: [String: ModSeqTree] = [:]) {
        objects.replaceDocuments(with: documents)
        sizeEstimate = 0
        for (name, members) in documents {
            objects.entry(name)?.modSeqs = modSeqs[name] ?? ModSeqTree(madeAt: seq)
            sizeEstimate += Self.sizeEstimate(of: name, members)
        }
        self.seq = seq
    }

    /// What one document counts in ``sizeEstimate``.
    static func sizeEstimate(of name: String, _ members: JSONObject) -> Int {
        ChangeRecord.documentOverhead(name) + JSONValue.object(members).sizeEstimate
    }

    /// Where a checked write goes: the object's entry, when it exists, and
    /// the position of a one-key path's member in its document, when that
    /// exists, so that the write hashes neither the name nor the key again.
    /// The shared controller finds the object's observations there too.
    struct Target {
        let entry: ObjectTable.Entry?
        fileprivate let memberIndex: Int?
    }

    /// Follows `keys` as far as values exist, in one walk: the value at
    /// `keys` (nil when a key is missing), how many leading keys exist, and
    /// where to write; throws `not_an_object` where a value that exists on the
    /// way is not an object.
    func checkedValue<Keys: Collection<String>>(_ object: String, at keys: Keys) throws(KVOEngineError)
        -> (value: JSONValue?, existingKeys: Int, target: Target) {
        let entry = objects.entry(object)
        guard let entry else { return (nil, 0, Target(entry: nil, memberIndex: nil)) }
        if keys.count == 1 {
            guard let index = Self.index(of: keys[keys.startIndex], in: &entry.members) else {
                return (nil, 0, Target(entry: entry, memberIndex: nil))
            }
            return (Self.value(at: index, in: &entry.members), 1, Target(entry: entry, memberIndex: index))
        }
        guard let document = entry.members else { return (nil, 0, Target(entry: entry, memberIndex: nil)) }
        let target = Target(entry: entry, memberIndex: nil)
        var members = document
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

    // Read through `inout`, the document is borrowed where it is: a read of
    // the property, or a local bound to it, copies its three buffers (three
    // retains and releases a set).
    private static func index(of key: String, in members: inout JSONObject?) -> Int? {
        members?.index(forKey: key)
    }

    private static func value(at index: Int, in members: inout JSONObject?) -> JSONValue {
        members!.values[index]
    }

    // MARK: Mutation

    private func write(_ entry: ObjectTable.Entry?, _ object: String, at keys: ArraySlice<String>, _ value: JSONValue?) {
        guard let entry, entry.members != nil else {
            guard value != nil else { return }
            var members: JSONObject = [:]
            Self.write(into: &members, keys, value)
            objects.setMembers(members, of: entry ?? objects.entryCreating(object), named: object)
            return
        }
        Self.write(into: &entry.members!, keys, value)
    }

    /// Writes a set's new value (the record's) to where
    /// ``checkedValue(_:at:)`` found its path, nothing having changed the store in between.
    func write(setting change: ChangeRecord, to target: Target) {
        guard let value = change.new else { return }
        if let index = target.memberIndex, target.entry != nil {
            target.entry?.setValue(consume value, ofMemberAt: index)
        } else {
            write(target.entry, change.object, at: change.path[...], value)
        }
    }

    /// `value` (nil: removed) at `keys` of `members`, creating missing objects on the way (not
    /// for a removal); nothing where a value on the way is not an object. Also the redo of a change.
    static func write(into members: inout JSONObject, _ keys: ArraySlice<String>, _ value: JSONValue?) {
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

    /// Applies `change` (a delete, insert, remove or replace at a non-empty
    /// key path, checked) to its object in place (one hash of the name, no
    /// copy of the document), making the object for an insert into none.
    /// Deleting the last member leaves an empty object, as a set to `{}`
    /// would; only `delete` without a key path removes the object.
    func apply(_ change: ChangeRecord) {
        let entry = objects.entryCreating(change.object)
        if entry.members == nil { objects.setMembers([:], of: entry, named: change.object) }
        change.apply(to: &entry.members!)
    }

    /// Takes a copy of another store's document and its modSeqs (a batch's trial).
    func adopt(_ object: String, members: JSONObject, modSeqs: ModSeqTree) {
        let entry = objects.entryCreating(object)
        objects.setMembers(members, of: entry, named: object)
        entry.modSeqs = modSeqs
    }

    /// Makes `members` the whole document of `object`.
    func replaceDocument(_ object: String, with members: JSONObject) {
        objects.setMembers(members, of: objects.entryCreating(object), named: object)
    }

    /// Removes the whole object; returns its document.
    func removeObject(_ object: String) -> JSONObject? {
        guard let entry = objects.entry(object), let members = entry.members else { return nil }
        objects.setMembers(nil, of: entry, named: object)
        return members
    }
}
