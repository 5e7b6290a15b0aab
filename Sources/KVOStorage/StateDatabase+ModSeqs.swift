import KVOEngine

/// The documents' modSeqs on disk: a row per top-level member that has a
/// node of its own (its subtree, ``ModSeqTree/json``), and one with the empty
/// key for the document's root (its own two seqs, no children). Like the
/// members, only the rows of the members a commit touched are written.
extension StateDatabase {
    static let modSeqSchema = """
        CREATE TABLE IF NOT EXISTS mod_seqs (
            object TEXT NOT NULL,
            key TEXT NOT NULL,
            tree TEXT NOT NULL,
            PRIMARY KEY (object, key)
        ) WITHOUT ROWID;
        """

    /// Brings `name`'s rows to `edit`'s modSeqs.
    func writeModSeqs(_ name: String, _ edit: ObjectEdit) throws(SQLiteError) {
        guard let tree = edit.modSeqs else { return }
        let root = ModSeqTree(replacedAt: tree.replacedAt, modifiedAt: tree.modifiedAt)
        if edit.rewritesAll {
            try run(statements.deleteModSeqs, name)
            try upsertModSeq(name, "", root)
            for (key, child) in tree.children { try upsertModSeq(name, key, child) }
            return
        }
        try upsertModSeq(name, "", root)
        for key in edit.touched {
            if let child = tree.children[key] {
                try upsertModSeq(name, key, child)
            } else {
                statements.deleteModSeq.bind(1, CanonicalName.of(name))
                statements.deleteModSeq.bind(2, CanonicalName.of(key))
                try statements.deleteModSeq.run()
            }
        }
    }

    private func upsertModSeq(_ name: String, _ key: String, _ tree: ModSeqTree) throws(SQLiteError) {
        let upsert = statements.upsertModSeqs
        upsert.bind(1, CanonicalName.of(name))
        upsert.bind(2, CanonicalName.of(key))
        upsert.bind(3, utf8: tree.json.jsonBytes)
        try upsert.run()
    }

    /// The modSeqs of the loaded documents; a document without a root row
    /// (written before modSeqs were kept) is left out, and counts as changed
    /// at the saved seq.
    func loadModSeqs(of documents: [String: JSONObject]) throws -> [String: ModSeqTree] {
        var trees: [String: ModSeqTree] = [:]
        var children: [String: [String: ModSeqTree]] = [:]
        let rows = try connection.prepare("SELECT object, key, tree FROM mod_seqs")
        while try rows.step() {
            let object = rows.text(0) ?? ""
            let key = rows.text(1) ?? ""
            guard documents[object] != nil,
                  // Two JSON levels per level of the document: {"c":{key: node}}.
                  let json = try? JSONReader.parse(rows.bytes(2) ?? [], maxDepth: 2 * DocumentDepth.readerLimit + 4),
                  let tree = ModSeqTree(json: json) else {
                continue
            }
            if key.isEmpty { trees[object] = tree } else { children[object, default: [:]][key] = tree }
        }
        for (object, nodes) in children where trees[object] != nil { trees[object]!.children = nodes }
        return trees
    }
}
