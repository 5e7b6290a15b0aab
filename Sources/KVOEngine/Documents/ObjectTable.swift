import KVOValues

/// Every object name that has a document, observations, or both, with what
/// the store and the shared controller keep for it.
///
/// The two share one table so that a change finds its object with one hash of
/// the name: the store's document and the root of the observation index come
/// from the same entry.
final class ObjectTable {
    /// What is kept for one object name.
    final class Entry {
        /// The document's members; nil when the object has no document.
        @exclusivity(unchecked) var members: JSONObject?
        /// The root of the object's observation index; nil when nothing observes it.
        @exclusivity(unchecked) var observers: PathNode?
        /// The modSeqs of the document's values (meaningful while it has one),
        /// with the table's deferred set of a member written in first.
        var modSeqs: ModSeqTree {
            get {
                table.settleDeferredSet(of: self)
                return tree
            }
            set {
                table.settleDeferredSet(of: self)
                tree = newValue
            }
            _modify {
                table.settleDeferredSet(of: self)
                yield &tree
            }
        }
        /// The modSeqs as kept, without the deferred set (``ObjectTable/deferredSet``).
        @exclusivity(unchecked) fileprivate var tree = ModSeqTree(replacedAt: 0, modifiedAt: 0)
        /// The document's leased values, by key path (`""`: the whole
        /// document), with the generation that names each grant; nil when none.
        @exclusivity(unchecked) var leases: [String: (lease: Lease, generation: UInt64)]?
        /// The table, for the deferred set; an entry never outlives it.
        fileprivate unowned let table: ObjectTable

        fileprivate init(table: ObjectTable) {
            self.table = table
        }

        /// Puts `value` in place of the value of the document's member at `index`.
        func setValue(_ value: consuming JSONValue, ofMemberAt index: Int) {
            members!.values[index] = value
        }
    }

    /// A set of a document's top-level member recorded in its modSeq tree's
    /// root but not yet in the member's node, which is then made anew at the
    /// root's `modifiedAt` (the set's seq: any other change settles it first).
    /// A run of sets of one member (a client's pipelined sets, a counter)
    /// then hashes the member's name once, not once per set; any other read
    /// or change of the entry's modSeqs writes the node in first.
    @exclusivity(unchecked) private var deferredSet: (entry: Entry, key: String)?

    @exclusivity(unchecked) private var entries: [String: Entry] = [:]
    /// The entry found last and its name: changes come in runs on one object
    /// (a client's pipelined sets), and comparing a name costs less than
    /// hashing it. Cleared whenever an entry leaves the table.
    @exclusivity(unchecked) private var lastFound: (name: String, entry: Entry)?
    /// The names that have a document, in NFC byte order (`list`, prefix `initial`).
    @exclusivity(unchecked) private(set) var names = NameIndex()
    /// How many entries have a document.
    var documentCount: Int { names.count }

    /// The entry of `name`, if it has a document or observations.
    @inline(__always)
    func entry(_ name: String) -> Entry? {
        if let lastFound, lastFound.name == name { return lastFound.entry }
        guard let found = entries[name] else { return nil }
        lastFound = (name, found)
        return found
    }

    /// The entry of `name`, made empty if missing (the caller fills it).
    func entryCreating(_ name: String) -> Entry {
        if let existing = entries[name] { return existing }
        let made = Entry(table: self)
        entries[name] = made
        return made
    }

    /// Records in `entry`'s modSeqs the set of its document's top-level member
    /// `key` at `seq`, exactly as ``ModSeqTree/record(_:)`` would (the member's
    /// node made anew, the root modified), the member's node deferred.
    /// Inlined, with the new deferred set out of line: a call that might
    /// keep `entry` and `key` was passed retained copies of them on every set.
    @inline(__always)
    func recordSet(ofMember key: String, at seq: UInt64, in entry: Entry) {
        if deferredSet?.entry !== entry || deferredSet?.key != key { deferSet(ofMember: key, in: entry) }
        entry.tree.modifiedAt = seq
    }

    private func deferSet(ofMember key: String, in entry: Entry) {
        // Settled before the root moves: the deferred node takes the root's seq.
        settleDeferredSet()
        deferredSet = (entry, key)
    }

    /// Writes the deferred set into its entry's tree, if it is `entry`'s.
    @inline(__always)
    fileprivate func settleDeferredSet(of entry: Entry) {
        if let deferredSet, deferredSet.entry === entry { settleDeferredSet() }
    }

    private func settleDeferredSet() {
        guard let (entry, key) = deferredSet else { return }
        deferredSet = nil
        entry.tree.children[key] = ModSeqTree(madeAt: entry.tree.modifiedAt)
    }

    /// Sets or clears the document of `entry` (named `name`), keeping the
    /// count and dropping an entry left with neither document nor observations.
    func setMembers(_ members: JSONObject?, of entry: Entry, named name: String) {
        if (members != nil) != (entry.members != nil) {
            // The spelling the table keeps, which `list` echoes: a canonically
            // equal name in the request finds the same entry.
            let kept = entries.index(forKey: name).map { entries.keys[$0] } ?? name
            if members != nil { names.insert(kept) } else { names.remove(kept) }
        }
        entry.members = members
        dropIfEmpty(entry, named: name)
    }

    /// Sets or clears the observation root of `entry` (named `name`).
    func setObservers(_ root: PathNode?, of entry: Entry, named name: String) {
        entry.observers = root
        dropIfEmpty(entry, named: name)
    }

    /// Sets or clears the leases of `entry` (named `name`).
    func setLeases(_ leases: [String: (lease: Lease, generation: UInt64)]?, of entry: Entry, named name: String) {
        entry.leases = leases
        dropIfEmpty(entry, named: name)
    }

    private func dropIfEmpty(_ entry: Entry, named name: String) {
        if entry.members == nil && entry.observers == nil && entry.leases == nil {
            entries[name] = nil
            lastFound = nil
            if deferredSet?.entry === entry { deferredSet = nil }
        }
    }

    /// Every document, by object name.
    var documents: [String: JSONObject] { entries.compactMapValues(\.members) }

    /// Every observation root, by object name.
    var observationRoots: [(name: String, root: PathNode)] {
        entries.compactMap { name, entry in entry.observers.map { (name, $0) } }
    }

    /// Replaces every document (observations stay).
    func replaceDocuments(with documents: [String: JSONObject]) {
        for (name, entry) in entries where entry.members != nil {
            setMembers(nil, of: entry, named: name)
        }
        for (name, members) in documents {
            entryCreating(name).members = members
        }
        names.replaceAll(with: entries.compactMap { $0.value.members != nil ? $0.key : nil })
    }
}
