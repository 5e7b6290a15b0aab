import KVOValues

/// The operations that change the store. Each one checks everything first,
/// then reports the change to the shared controller around applying it:
/// prior events, the change itself, the change events.
extension Engine {
    func set(_ object: consuming String, _ keyPath: consuming ObservedPath, _ value: consuming JSONValue,
             lease: Lease? = nil) throws(KVOEngineError) -> UInt64 {
        if keyPath.isWholeDocument { return try setDocument(object, value, lease: lease) }
        // One walk checks the path, reads the old value and counts what exists.
        let (old, existing, target) = try store.checkedValue(object, at: keyPath.components)
        let entry = target.entry
        // Each part moves into the record (a copy was a retain and a release);
        // what follows reads them there.
        let change = ChangeRecord(object: consume object, path: (consume keyPath).components, kind: .setting,
                                  old: consume old, new: consume value, seq: store.seq + 1, existingKeys: existing,
                                  createdObject: entry?.members == nil, lease: lease)
        try resources.admit(change)
        switch shared.route(of: change, in: entry) {
        case .unobserved:
            store.write(setting: change, to: target)
            record(change, in: entry)
        case .exactly(let node):
            // The common case, without the shared controller's general
            // bookkeeping: no prior events, no ancestors, no descendants.
            store.write(setting: change, to: target)
            record(change, in: entry)
            shared.didChange(change, exactlyAt: node)
        case .general:
            return commit(change) { store.write(setting: change, to: target) }
        }
        return change.seq
    }

    /// Replaces the whole document (a set without key path): `value` must be a JSON object.
    private func setDocument(_ object: String, _ value: JSONValue, lease: Lease?) throws(KVOEngineError) -> UInt64 {
        guard case .object(let members) = value else {
            throw KVOEngineError(.notAnObject, "a whole document must be a JSON object, not \(value.typeName)")
        }
        let change = ChangeRecord(object: object, path: [], kind: .setting, old: store.value(object, at: []),
                                  new: value, seq: store.seq + 1, existingKeys: 0, lease: lease)
        try resources.admit(change)
        return commit(change) { store.replaceDocument(object, with: members) }
    }

    /// Deleting what is not there succeeds and changes nothing (no seq, no event).
    /// `cause`: kvod deletes it itself (an owner left, a deadline passed).
    func delete(_ object: String, _ keyPath: ObservedPath?, cause: ChangeCause? = nil) -> UInt64 {
        guard let keyPath else {
            guard let document = store.value(object, at: []) else { return store.seq }
            let change = ChangeRecord(object: object, path: [], kind: .setting, old: document, new: nil,
                                seq: store.seq + 1, existingKeys: 0, cause: cause)
            return commit(change) { _ = store.removeObject(object) }
        }
        let keys = keyPath.components[...]
        guard let old = store.value(object, at: keys) else { return store.seq }
        let change = ChangeRecord(object: object, path: keyPath.components, kind: .setting, old: old, new: nil,
                            seq: store.seq + 1, existingKeys: keys.count,
                            memberIndex: store.memberIndex(object, at: keys), cause: cause)
        return commit(change)
    }

    /// An insert's change, checked and admitted; nothing applied yet.
    func insertion(_ object: String, _ keyPath: ObservedPath, at index: Int?,
                   _ values: [JSONValue]) throws(KVOEngineError) -> ChangeRecord {
        let keys = keyPath.components[...]
        // The whole path: every value above the array must be an object.
        let existing = try store.checkedValue(object, at: keys).existingKeys
        let count: Int
        switch store.value(object, at: keys) {
        case nil: count = 0
        case .array(let elements)?: count = elements.count
        case let other?: throw notAnArray(object, keyPath, other)
        }
        let position = index ?? count
        guard position <= count else {
            throw KVOEngineError(.indexOutOfRange, "index \(position) is past the end of \(object) \(keyPath) (count \(count))")
        }
        let change = ChangeRecord(object: object, path: keyPath.components, kind: .insertion,
                            indexes: Array(position..<(position + values.count)), old: nil, new: .array(values),
                            seq: store.seq + 1, existingKeys: existing, createdObject: store.document(object) == nil)
        try resources.admit(change)
        return change
    }

    /// A remove's change, checked; nothing applied yet.
    func removal(_ object: String, _ keyPath: ObservedPath, at indexes: [Int]) throws(KVOEngineError) -> ChangeRecord {
        let removed = try elements(of: object, keyPath, at: indexes)
        return ChangeRecord(object: object, path: keyPath.components, kind: .removal, indexes: indexes,
                            old: .array(removed), new: nil, seq: store.seq + 1, existingKeys: keyPath.components.count)
    }

    /// A replace's change, checked and admitted; nothing applied yet.
    func replacement(_ object: String, _ keyPath: ObservedPath, at indexes: [Int],
                     with values: [JSONValue]) throws(KVOEngineError) -> ChangeRecord {
        let replaced = try elements(of: object, keyPath, at: indexes)
        let change = ChangeRecord(object: object, path: keyPath.components, kind: .replacement, indexes: indexes,
                            old: .array(replaced), new: .array(values), seq: store.seq + 1,
                            existingKeys: keyPath.components.count)
        try resources.admit(change)
        return change
    }

    // MARK: Helpers

    /// ``commit(_:apply:)`` of a change the store applies as its record says
    /// (``Store/apply(_:)``): a delete at a key path, an insert, a remove, a replace.
    func commit(_ change: ChangeRecord) -> UInt64 {
        commit(change) { store.apply(change) }
    }

    /// Reports `change` to the shared controller around `apply`, counts it,
    /// keeps it in the history and hands it to the change log.
    @discardableResult
    func commit(_ change: ChangeRecord, apply: () -> Void) -> UInt64 {
        let store = self.store
        // The readers capture the object's name, not the record: a closure
        // that captures the record copies all of it.
        let object = change.object
        let pending = shared.willChange(change) { keys in store.value(object, at: keys) }
        apply()
        record(change)
        if let pending {
            shared.didChange(pending) { keys in store.value(object, at: keys) }
        }
        return change.seq
    }

    /// Counts an applied change, notes it in its document's modSeqs, keeps it
    /// in the history and hands it to the change log. `entry` is the
    /// object's, when the caller has it at hand.
    private func record(_ change: ChangeRecord, in entry: ObjectTable.Entry? = nil) {
        store.seq = change.seq
        store.sizeEstimate += change.storeGrowth
        store.recordModSeq(of: change, in: entry)
        updateLeases(for: change, in: entry)
        history.append(change)
        changeLog?.record(change)
    }

    /// The elements at `indexes` of the array at `keyPath`, which must exist
    /// and hold every index. Returns copies of the elements only, so that the
    /// array itself stays uniquely referenced and is changed in place.
    private func elements(of object: String, _ keyPath: ObservedPath,
                          at indexes: [Int]) throws(KVOEngineError) -> [JSONValue] {
        guard let value = store.value(object, at: keyPath.components) else {
            throw KVOEngineError(.notFound, "\(object) has no value at \(keyPath)")
        }
        guard case .array(let elements) = value else { throw notAnArray(object, keyPath, value) }
        if let bad = indexes.last, bad >= elements.count {
            throw KVOEngineError(.indexOutOfRange, "index \(bad) is outside \(object) \(keyPath) (count \(elements.count))")
        }
        return indexes.map { elements[$0] }
    }

    private func notAnArray(_ object: String, _ keyPath: ObservedPath, _ value: JSONValue) -> KVOEngineError {
        KVOEngineError(.notAnArray, "\(object) \(keyPath) is \(value.typeName), not an array")
    }
}
