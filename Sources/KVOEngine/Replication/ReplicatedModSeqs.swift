import KVOValues

/// The modSeqs of an object as a proposed change leaves them, for its record
/// in the replicated store (docs/CLUSTER.md, "modSeqs over etcd"): the tree
/// every kvod then takes for the object, whether it follows the change or
/// later loads the store, so a key path has the same modSeq on every kvod.
public struct ProposedModSeqs: Sendable, Equatable {
    /// The object's tree after the change, the change's own seqs numbered as
    /// the replica numbered them (above ``base``).
    public let tree: ModSeqTree
    /// The replica's seq when the change was computed: every seq above it is
    /// the change's, whose revision the store has not given yet.
    public let base: UInt64

    /// The stored form, at most `maxBytes` of JSON: ``ModSeqTree/json`` with
    /// the change's own seqs written `0` ("the revision of this record").
    /// A tree too large keeps fewer levels (each value below the last level
    /// kept takes its nearest kept ancestor's modSeq, which is never older:
    /// an `ifModSeq` may then fail where a finer tree would not, never the
    /// other way); nil when not even the root fits.
    public func json(maxBytes: Int) -> JSONValue? {
        let marked = tree.mapSeqs { $0 > base ? 0 : $0 } ?? tree  // never nil: the transform takes every seq
        var json = marked.json
        guard json.jsonBytes.count > maxBytes else { return json }
        for depth in stride(from: marked.depth - 1, through: 0, by: -1) {
            json = marked.pruned(below: depth).json
            if json.jsonBytes.count <= maxBytes { return json }
        }
        return nil
    }
}

/// Where a change record holds its object's modSeqs, and how they are read back.
public enum ReplicatedModSeqs {
    /// The record's member that holds them.
    public static let field = "modSeqs"
    /// At most this many bytes of JSON per object's tree: the record travels
    /// in every `Txn` of the object and is read by every kvod.
    public static let maxBytes = 65_536

    /// `record` (a change record's JSON object) with `modSeqs` (a ``ProposedModSeqs/json(maxBytes:)``) added.
    public static func record(_ record: JSONValue, with modSeqs: JSONValue?) -> JSONValue {
        guard let modSeqs, case .object(var members) = record else { return record }
        members[field] = modSeqs
        return .object(members)
    }

    /// The tree a stored record holds, its `0`s read as `revision` (the
    /// revision the record was put at, the document's with it); nil when it
    /// holds none (written by an older kvod, or not by kvod) or one that is
    /// not a tree of seqs up to `revision`.
    public static func tree(inRecord record: JSONValue, revision: UInt64) -> ModSeqTree? {
        guard let json = record.member(field), let stored = ModSeqTree(json: json) else { return nil }
        return stored.mapSeqs { seq in
            if seq == 0 { return revision }
            return seq <= revision ? seq : nil
        }
    }
}

extension ModSeqTree {
    /// The tree with every seq passed through `transform`; nil when it refuses one.
    func mapSeqs(_ transform: (UInt64) -> UInt64?) -> ModSeqTree? {
        guard let replaced = transform(replacedAt), let modified = transform(modifiedAt) else { return nil }
        var mapped: [String: ModSeqTree] = [:]
        mapped.reserveCapacity(children.count)
        for (key, child) in children {
            guard let node = child.mapSeqs(transform) else { return nil }
            mapped[key] = node
        }
        return ModSeqTree(replacedAt: replaced, modifiedAt: modified, children: mapped)
    }

    /// How many levels of nodes the tree has (1: the root alone).
    var depth: Int { 1 + (children.values.map(\.depth).max() ?? 0) }

    /// The tree with no node deeper than `depth` below the root: a node at
    /// that depth counts as replaced when it was last modified.
    func pruned(below depth: Int) -> ModSeqTree {
        guard depth > 0 else { return ModSeqTree(replacedAt: modifiedAt, modifiedAt: modifiedAt) }
        return ModSeqTree(replacedAt: replacedAt, modifiedAt: modifiedAt,
                          children: children.mapValues { $0.pruned(below: depth - 1) })
    }
}
