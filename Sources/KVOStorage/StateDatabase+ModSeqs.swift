import KVOEngine
import KVOValues

/// The documents' modSeqs on disk since schema version 5: the root's in the
/// object's row (`objects.mod_seqs`, its own two seqs, no children) and each
/// top-level member's subtree in the member's row (`members.mod_seqs`,
/// ``ModSeqTree/json``; NULL when the member has no node of its own). So a
/// commit writes them with the rows it writes anyway: versions 2 to 4 kept
/// them in a table of their own, `mod_seqs`, two more rows per object per
/// commit (docs/PERFORMANCE.md).
extension StateDatabase {
    /// Version 4 → 5: the `mod_seqs` columns, filled from the `mod_seqs`
    /// table (when there is one; rows of objects or members that no longer
    /// exist are dropped), which then goes.
    static func migrateFromVersion4(_ connection: SQLiteConnection) throws(SQLiteError) {
        let hasTable = try connection.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'mod_seqs'") == 1
        try connection.execute("""
            BEGIN;
            ALTER TABLE objects ADD COLUMN mod_seqs TEXT;
            ALTER TABLE members ADD COLUMN mod_seqs TEXT;
            \(hasTable ? """
                UPDATE objects SET mod_seqs = (SELECT tree FROM mod_seqs AS m WHERE m.object = objects.name AND m.key = '');
                UPDATE members SET mod_seqs = (SELECT tree FROM mod_seqs AS m
                    WHERE m.object = members.object AND m.key = members.key AND m.key != '');
                DROP TABLE mod_seqs;
                """ : "")
            PRAGMA user_version = 5;
            COMMIT;
            """)
    }

    /// The JSON of the node of `key` (nil: the member has none), when the
    /// edit knows its object's modSeqs.
    static func modSeqsJSON(of key: String, in tree: ModSeqTree) -> [UInt8]? {
        tree.children[key].map(modSeqsJSON)
    }

    /// The JSON of the root's own seqs (its children are in the members' rows).
    static func rootModSeqsJSON(_ tree: ModSeqTree) -> [UInt8] {
        modSeqsJSON(ModSeqTree(replacedAt: tree.replacedAt, modifiedAt: tree.modifiedAt))
    }

    /// ``ModSeqTree/json``'s bytes, written directly when the node has no
    /// children (every root, and most members): building the JSON value
    /// first cost a dictionary per row.
    static func modSeqsJSON(_ tree: ModSeqTree) -> [UInt8] {
        guard tree.children.isEmpty else { return tree.json.jsonBytes }
        if tree.replacedAt == tree.modifiedAt { return Array(String(tree.replacedAt).utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(48)
        bytes += #"{"r":"#.utf8
        bytes += String(tree.replacedAt).utf8
        bytes += #","m":"#.utf8
        bytes += String(tree.modifiedAt).utf8
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The modSeqs of the loaded documents; a document without a root
    /// (written before modSeqs were kept) is left out, and counts as changed
    /// at the saved seq.
    func loadModSeqs(of documents: [String: JSONObject]) throws -> [String: ModSeqTree] {
        var trees: [String: ModSeqTree] = [:]
        var children: [String: [String: ModSeqTree]] = [:]
        let rows = try connection.prepare("""
            SELECT name, NULL, mod_seqs FROM objects WHERE mod_seqs IS NOT NULL
            UNION ALL SELECT object, key, mod_seqs FROM members WHERE mod_seqs IS NOT NULL
            """)
        while try rows.step() {
            let object = rows.text(0) ?? ""
            // NULL: the root (a member's key may be empty).
            let key = rows.isNull(1) ? nil : rows.text(1) ?? ""
            guard documents[object] != nil,
                  // Two JSON levels per level of the document: {"c":{key: node}}.
                  let json = try? JSONReader.parse(rows.bytes(2) ?? [], maxDepth: 2 * DocumentDepth.readerLimit + 4),
                  let tree = ModSeqTree(json: json) else {
                continue
            }
            if let key { children[object, default: [:]][key] = tree } else { trees[object] = tree }
        }
        for (object, nodes) in children where trees[object] != nil { trees[object]!.children = nodes }
        return trees
    }
}
