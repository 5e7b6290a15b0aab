import Foundation
import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import Testing

/// Opening a version 1 data directory brings it to the current version.
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
        try connection.execute("""
            DROP TABLE quarantine;
            DROP TABLE history_batches;
            PRAGMA user_version = 1;
            INSERT INTO objects VALUES ('\(Self.nfc)'), ('\(Self.nfd)');
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
        #expect(state.documents.count == 1)
        #expect(state.documents[Self.nfc] == [Self.nfc: 2, "k": 3])
        let rows = try database.connection.prepare("SELECT object, key FROM members UNION ALL SELECT name, '' FROM objects")
        while try rows.step() {
            #expect(rows.bytes(0) == Array(Self.nfc.utf8))
            #expect(rows.bytes(1) == [] || rows.bytes(1) == Array("k".utf8) || rows.bytes(1) == Array(Self.nfc.utf8))
        }
        #expect(state.history.map(\.object).allSatisfy { Array($0.utf8) == Array(Self.nfc.utf8) })
        #expect(try database.connection.integer("SELECT COUNT(*) FROM quarantine") == 0)
        // modSeqs under either spelling are dropped (they start again at the saved seq); others stay.
        #expect(try database.connection.integer("SELECT COUNT(*) FROM mod_seqs") == 1)
    }
}
