/// The modSeqs of one document: for every value, the seq of the last change
/// at or under its key path, counting a change at an ancestor that replaced
/// it (issue 14's `modSeq`, ZooKeeper's version, etcd's mod_revision).
///
/// A tree beside the document, with a node only where a change was made at
/// or under it since its parent was last replaced: a value without a node of
/// its own was last changed when its nearest ancestor with a node was
/// replaced. Each change updates the nodes on its path; nothing scans the
/// history. A value type, so that a commit can take a snapshot for the disk
/// without copying (the loop's copy is changed in place).
public struct ModSeqTree: Sendable, Equatable {
    /// The seq of the last change that replaced this value whole (set it,
    /// or set or created an ancestor).
    public var replacedAt: UInt64
    /// The seq of the last change at or under this value (≥ ``replacedAt``).
    public var modifiedAt: UInt64
    public var children: [String: ModSeqTree]

    public init(replacedAt: UInt64, modifiedAt: UInt64, children: [String: ModSeqTree] = [:]) {
        self.replacedAt = replacedAt
        self.modifiedAt = modifiedAt
        self.children = children
    }

    /// A value made whole by the change `seq`.
    init(madeAt seq: UInt64) {
        self.init(replacedAt: seq, modifiedAt: seq)
    }

    /// The modSeq of the value at `keys` under this one, which must exist.
    func modSeq(at keys: ArraySlice<String>) -> UInt64 {
        guard let key = keys.first else { return modifiedAt }
        guard let child = children[key] else { return replacedAt }
        return child.modSeq(at: keys.dropFirst())
    }

    /// Records the change `change` under this tree (the document's root):
    /// every node on its path was modified by it; its own value was replaced
    /// (or removed, for a delete).
    mutating func record(_ change: ChangeRecord) {
        record(change, depth: 0)
    }

    private mutating func record(_ change: ChangeRecord, depth: Int) {
        let seq = change.seq
        modifiedAt = seq
        guard depth < change.path.count else {
            // The changed value itself: replaced whole; nothing under it keeps a node.
            replacedAt = seq
            children = [:]
            return
        }
        let key = change.path[depth]
        let isLast = depth == change.path.count - 1
        if isLast, change.kind == .setting, change.new == nil {
            children[key] = nil
            return
        }
        // A value on the way that existed before keeps its time of creation;
        // one the change made is its own.
        let existed = depth + 1 <= change.existingKeys
        let inherited = existed ? replacedAt : seq
        children[key, default: ModSeqTree(madeAt: inherited)].record(change, depth: depth + 1)
    }
}
