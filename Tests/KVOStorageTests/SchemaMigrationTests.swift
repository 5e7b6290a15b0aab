import Foundation
import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// Opening an older data directory brings it to the current version.
@Suite struct SchemaMigrationTests {
    static let nfd = "caf\u{65}\u{301}"
    static let nfc = "caf\u{e9}"

    /// A version 1 directory as a kvod before NFC wrote it: one object under
    /// two spellings, the NFD one's member created later.
    func makeVersion1(_ directory: String) throws {
        do {
            _ = try StateDatabase(directory: directory, syncMode: .off, historyCapacity: 10)
        }
        let connection = try SQLiteConnection(path: directory + "/" + StateDatabase.fileName)
        try Self.makeVersion4Tables(connection)
        try connection.execute("""
            DROP TABLE quarantine;
            DROP TABLE history_batches;
            PRAGMA user_version = 1;
            INSERT INTO objects VALUES ('\(Self.nfc)'), ('\(Self.nfd)'), ('other');
            INSERT INTO members VALUES ('\(Self.nfc)', 'k', 1, 0, '1'), ('\(Self.nfd)', 'k', 3, 0, '3'),
                                       ('\(Self.nfd)', '\(Self.nfd)', 2, 0, '2');
            INSERT INTO history (seq, object, key_path, kind, new, existing_keys)
                VALUES (1, '\(Self.nfc)', 'k', 'setting', '1', 0), (2, '\(Self.nfd)', '\(Self.nfd)', 'setting', '2', 0),
                       (3, '\(Self.nfd)', 'k', 'setting', '3', 0);
            INSERT INTO mod_seqs VALUES ('\(Self.nfc)', '', '[1,1]'), ('\(Self.nfd)', 'k', '[3,3]'), ('other', '', '[1,1]');
            """)
    }

    @Test func openingAVersion1DirectoryStoresEveryNameInNFCAndKeepsTheLaterRow() throws {
        let directory = try TemporaryDirectory()
        try makeVersion1(directory.path)
        let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
        #expect(try database.connection.integer("PRAGMA user_version") == StateDatabase.schemaVersion)
        let state = try database.load()
        #expect(state.documents.count == 2)
        #expect(state.documents[Self.nfc] == [Self.nfc: 2, "k": 3])
        let rows = try database.connection.prepare("""
            SELECT object, key FROM members UNION ALL SELECT name, '' FROM objects WHERE name != 'other'
            """)
        while try rows.step() {
            #expect(rows.bytes(0) == Array(Self.nfc.utf8))
            #expect(rows.bytes(1) == [] || rows.bytes(1) == Array("k".utf8) || rows.bytes(1) == Array(Self.nfc.utf8))
        }
        #expect(state.history.map(\.object).allSatisfy { Array($0.utf8) == Array(Self.nfc.utf8) })
        #expect(try database.connection.integer("SELECT COUNT(*) FROM quarantine") == 0)
        // modSeqs under either spelling are dropped (they start again at the saved seq); others stay.
        #expect(try database.connection.integer("SELECT COUNT(*) FROM objects WHERE mod_seqs IS NOT NULL") == 1)
        #expect(try database.connection.text("SELECT mod_seqs FROM objects WHERE name = 'other'") == "[1,1]")
    }

    /// The tables as version 4 had them: the modSeqs in a table of their own.
    static func makeVersion4Tables(_ connection: SQLiteConnection) throws {
        try connection.execute("""
            ALTER TABLE objects DROP COLUMN mod_seqs;
            ALTER TABLE members DROP COLUMN mod_seqs;
            CREATE TABLE mod_seqs (object TEXT NOT NULL, key TEXT NOT NULL, tree TEXT NOT NULL,
                                   PRIMARY KEY (object, key)) WITHOUT ROWID;
            PRAGMA user_version = 4;
            """)
    }

    @Test func openingAVersion4DirectoryMovesEachModSeqRowIntoItsObjectsOrMembersRow() throws {
        let directory = try TemporaryDirectory()
        do {
            _ = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
        }
        do {
            let connection = try SQLiteConnection(path: directory.path + "/" + StateDatabase.fileName)
            try Self.makeVersion4Tables(connection)
            try connection.execute("""
                UPDATE meta SET value = 7 WHERE key = 'seq';
                INSERT INTO objects VALUES ('o'), ('p'), ('old');
                INSERT INTO members VALUES ('o', 'a', 1, 0, '{"x":5}'), ('o', 'b', 2, 0, '6'), ('o', '', 3, 0, '0'),
                                           ('old', 'k', 1, 0, '1');
                INSERT INTO mod_seqs VALUES ('o', '', '{"r":1,"m":7}'), ('o', 'a', '{"r":1,"m":5,"c":{"x":5}}'),
                                            ('o', 'b', '6'), ('p', '', '4'), ('gone', '', '3'), ('o', 'gone', '2');
                """)
        }
        let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
        #expect(try database.connection.integer("PRAGMA user_version") == StateDatabase.schemaVersion)
        #expect(try database.connection.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'mod_seqs'") == 0)
        let state = try database.load()
        #expect(state.seq == 7)
        #expect(state.documents["o"] == ["a": ["x": 5], "b": 6, "": 0])
        // Version 4's root row had the empty key: a member named "" had none of its own.
        #expect(state.modSeqs["o"] == ModSeqTree(replacedAt: 1, modifiedAt: 7, children: [
            "a": ModSeqTree(replacedAt: 1, modifiedAt: 5, children: ["x": ModSeqTree(replacedAt: 5, modifiedAt: 5)]),
            "b": ModSeqTree(replacedAt: 6, modifiedAt: 6),
        ]))
        #expect(state.modSeqs["p"] == ModSeqTree(replacedAt: 4, modifiedAt: 4))
        // Written before modSeqs were kept: no tree, so it counts as changed at the saved seq.
        #expect(state.modSeqs["old"] == nil)
    }

    @Test func aMemberNamedWithTheEmptyKeyKeepsItsModSeqsApartFromTheRoots() throws {
        let directory = try TemporaryDirectory()
        let tree = ModSeqTree(replacedAt: 1, modifiedAt: 3, children: ["": ModSeqTree(replacedAt: 2, modifiedAt: 3,
                                                                                       children: ["k": ModSeqTree(replacedAt: 3, modifiedAt: 3)])])
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
            let change = ChangeRecord(object: "o", path: ["", "k"], kind: .setting, old: nil, new: 1, seq: 3, existingKeys: 1)
            try database.write([CommitBatch(id: 1, changes: [change], documents: [("o", ["": ["k": 1]])], modSeqs: ["o": tree])])
        }
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10).load()
        #expect(state.modSeqs["o"] == tree)
    }
}

/// The modSeqs columns' JSON, written without building a JSON value, reads back as the tree.
@Suite struct ModSeqsColumnTests {
    @Test(arguments: [ModSeqTree(replacedAt: 7, modifiedAt: 7), ModSeqTree(replacedAt: 3, modifiedAt: 12),
                      ModSeqTree(replacedAt: 1, modifiedAt: 4, children: ["a\"b": ModSeqTree(replacedAt: 4, modifiedAt: 4)])])
    func writtenJSONReadsBackAsTheTree(tree: ModSeqTree) throws {
        let bytes = StateDatabase.modSeqsJSON(tree)
        #expect(ModSeqTree(json: try JSONReader.parse(bytes, maxDepth: 16)) == tree)
    }
}
