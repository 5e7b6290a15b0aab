import KVOValues

/// The four kinds of change KVO knows (`NSKeyValueChange`).
public enum ChangeKind: String, Sendable {
    case setting
    case insertion
    case removal
    case replacement
}

/// One change to one object, described before it is applied so that prior
/// events can be sent, and complete enough that every observer's event can be
/// derived from it without looking at the store again (except for observers
/// of an ancestor path, whose values the shared controller reads itself).
///
/// A change is also what kvod records and keeps in its history: with
/// ``existingKeys`` and ``memberIndex`` it can be undone exactly, which is how
/// a replay finds the values an ancestor observer saw (see ``ChangeHistory``).
///
/// A class, not a struct: a change is kept by the history and handed to the
/// change log, and each of those copies of a six-reference struct cost more
/// than the one allocation of an immutable object that they now share.
public final class ChangeRecord: Sendable, Equatable {
    /// The object that changes.
    public let object: String
    /// Where it changes; empty when the whole object is deleted.
    public let path: [String]
    public let kind: ChangeKind
    /// The array positions touched, for the collection kinds.
    public let indexes: [Int]
    /// For `setting`: the value at `path` before and after (nil: absent).
    /// For the collection kinds: the removed/replaced elements (`old`) and the
    /// inserted/replacing elements (`new`), each as an array.
    public let old: JSONValue?
    public let new: JSONValue?
    /// The daemon-wide sequence number of this change.
    public let seq: UInt64
    /// How many leading keys of `path` held a value before the change:
    /// `path.count` when the target existed, fewer when the change created it
    /// (and maybe intermediate objects). Undoing the change removes
    /// `path[existingKeys]` again.
    public let existingKeys: Int
    /// For a `setting` that removes a member (`new` nil, `path` not empty):
    /// the member's position in its parent object, so that undoing it puts it
    /// back where it was (objects keep their members' order).
    public let memberIndex: Int?
    /// Whether the object had no document before this change (which made
    /// it): undoing it leaves no document, not an empty one. Kept on disk
    /// since schema version 6 (docs/DURABILITY.md).
    public let createdObject: Bool
    /// Why kvod made this change itself (an ephemeral value's owner left, a
    /// `ttl` passed); nil for a client's change.
    public let cause: ChangeCause?
    /// Over etcd: the change brings the replica to the store's state after the
    /// changes between were compacted away; its events say `"resync": true`.
    public let isResync: Bool
    /// The lease a `set` with `ephemeral` or `ttl` puts on its value.
    public let lease: Lease?
    /// ``JSONValue/sizeEstimate`` of `old` and of `new` (0 when absent), taken
    /// once here: the history and the memory account read them, never the values.
    public let oldSize: Int
    public let newSize: Int
    /// About what keeping this record costs, in bytes: its values, names and
    /// indexes and the record itself. What `--history-bytes` bounds, in
    /// memory and on disk alike.
    public let bytes: Int

    /// What a record costs besides its names, indexes and values (the object
    /// and its arrays' headers, and its place in the history).
    static let fixedBytes = 192

    public init(object: String, path: [String], kind: ChangeKind, indexes: [Int] = [], old: JSONValue?,
                new: JSONValue?, seq: UInt64, existingKeys: Int, memberIndex: Int? = nil, createdObject: Bool = false,
                cause: ChangeCause? = nil, lease: Lease? = nil, resync: Bool = false) {
        // Sized from the arguments first: each is then moved into its field,
        // where a read after the store would copy it (a retain and a release).
        let oldSize = Self.size(of: old)
        let newSize = Self.size(of: new)
        bytes = Self.fixedBytes + object.utf8.count + path.reduce(0) { $0 + $1.utf8.count + 16 }
            + indexes.count * 8 + oldSize + newSize
        self.oldSize = oldSize
        self.newSize = newSize
        self.object = object
        self.path = path
        self.kind = kind
        self.indexes = indexes
        self.old = old
        self.new = new
        self.seq = seq
        self.existingKeys = existingKeys
        self.memberIndex = memberIndex
        self.createdObject = createdObject
        self.cause = cause
        isResync = resync
        self.lease = lease
    }

    /// ``JSONValue/sizeEstimate``, 0 for none. A call taking the value borrowed:
    /// optional chaining on the initializer's own argument copied it around the call.
    @inline(never)
    private static func size(of value: JSONValue?) -> Int {
        value?.sizeEstimate ?? 0
    }

    public static func == (lhs: ChangeRecord, rhs: ChangeRecord) -> Bool {
        lhs === rhs
            || (lhs.object == rhs.object && lhs.path == rhs.path && lhs.kind == rhs.kind && lhs.indexes == rhs.indexes
                && lhs.old == rhs.old && lhs.new == rhs.new && lhs.seq == rhs.seq
                && lhs.existingKeys == rhs.existingKeys && lhs.memberIndex == rhs.memberIndex
                && lhs.createdObject == rhs.createdObject && lhs.cause == rhs.cause && lhs.isResync == rhs.isResync)
    }
}

extension ChangeRecord {
    /// Whether the change deleted the whole document (its object is gone).
    var deletesObject: Bool { path.isEmpty && kind == .setting && new == nil }

    /// The changed key path as events name it (`changedKeyPath`); nil for a
    /// change of the whole document.
    var changedKeyPathText: String? {
        path.isEmpty ? nil : path.joined(separator: ".")
    }
}
