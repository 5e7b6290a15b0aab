import Foundation
@testable import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// The data directory against real SQLite files in a temporary folder.
@Suite struct StateDatabaseTests {
    @Test func loadOfAFreshDirectoryIsEmptyAndCreatesIt() throws {
        let directory = try TemporaryDirectory()
        let database = try StateDatabase(directory: directory.path + "/sub/state", syncMode: .always, historyCapacity: 10)
        let state = try database.load()
        #expect(state.seq == 0 && state.documents.isEmpty && state.history.isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/sub/state/kvod.db"))
    }

    @Test func writeThenReopenRestoresDocumentsSeqAndEveryFieldOfTheHistory() throws {
        let directory = try TemporaryDirectory()
        let changes = [
            ChangeRecord(object: "p", path: ["name"], kind: .setting, old: nil, new: "a", seq: 1, existingKeys: 0),
            ChangeRecord(object: "p", path: ["tags"], kind: .insertion, indexes: [0, 1], old: nil, new: ["x", "y"], seq: 2,
                   existingKeys: 0),
            ChangeRecord(object: "p", path: ["name"], kind: .setting, old: "a", new: nil, seq: 3, existingKeys: 1,
                   memberIndex: 0),
            ChangeRecord(object: "gone", path: [], kind: .setting, old: ["k": .null], new: nil, seq: 4, existingKeys: 0),
            ChangeRecord(object: "q\u{0}x", path: ["a", "c"], kind: .setting, old: .null, new: 1, seq: 5, existingKeys: 2),
        ]
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
            try database.write([
                CommitBatch(id: 1, changes: Array(changes[..<2]), documents: [("p", ["name": "a", "tags": ["x", "y"]])]),
                CommitBatch(id: 2, changes: Array(changes[2...]),
                            documents: [("p", ["tags": ["x", "y"]]), ("gone", nil), ("q\u{0}x", ["a": ["c": 1]])]),
            ])
        }
        let reopened = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
        let state = try reopened.load()
        #expect(state.seq == 5)
        #expect(state.documents == ["p": ["tags": ["x", "y"]], "q\u{0}x": ["a": ["c": 1]]])
        // Every field, a NUL inside a name, and JSON null distinct from an absent value.
        #expect(state.history == changes)
    }

    @Test func historyIsTrimmedToTheCapacityOnWriteAndOnLoad() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 5)
            for seq in UInt64(1)...12 {
                let change = ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: .number(JSONNumber(Int(seq))),
                                    seq: seq, existingKeys: 1)
                try database.write([CommitBatch(id: seq, changes: [change], documents: [("o", ["k": change.new!])])])
            }
            #expect(try database.historyChangesOnDisk() == 5)
        }
        let smaller = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 3)
        let state = try smaller.load()
        #expect(state.history.map(\.seq) == [10, 11, 12])
        #expect(state.documents["o"] == ["k": 12])
    }

    @Test func historyIsTrimmedToTheBytesOnWriteAndOnLoadByTheRuleOfTheHistoryInMemory() throws {
        let directory = try TemporaryDirectory()
        let value = JSONValue.string(String(repeating: "b", count: 10_000))
        let changes = (UInt64(1)...40).map { seq in
            ChangeRecord(object: "o", path: ["k\(seq)"], kind: .setting, old: nil, new: value, seq: seq, existingKeys: 0)
        }
        let limit = 100_000
        let memory = ChangeHistory(limits: HistoryLimits(maxChanges: 1_000, maxBytes: limit))
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 1_000,
                                             historyBytes: limit)
            for change in changes {
                memory.append(change)
                try database.write([CommitBatch(id: change.seq, changes: [change], documents: [("o", ["k": value])])])
            }
            // Rows that fell out go in steps of an eighth of the bytes.
            let rows = try #require(try database.historyChangesOnDisk())
            #expect(rows >= Int64(memory.count) && rows <= Int64(memory.count) + 2, "\(rows) rows")
        }
        do {
            let reopened = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 1_000,
                                             historyBytes: limit)
            let state = try reopened.load()
            #expect(state.seq == 40)
            #expect(state.history.map(\.seq) == memory.all.map(\.seq), "the same changes as the history in memory")
            #expect(try reopened.historyChangesOnDisk() == Int64(memory.count),
                    "the load deleted what it did not keep")
        }

        // A smaller bound keeps fewer, and a larger one later does not bring them back.
        _ = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 1_000, historyBytes: 30_000).load()
        let larger = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 1_000, historyBytes: limit)
        #expect(try larger.load().history.map(\.seq) == [39, 40])
    }

    @Test func changeOverTheBytesLeavesNoRowAndTheSeqInMeta() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10,
                                             historyBytes: 1_000)
            let small = ChangeRecord(object: "o", path: ["a"], kind: .setting, old: nil, new: 1, seq: 1, existingKeys: 0)
            let large = ChangeRecord(object: "o", path: ["b"], kind: .setting, old: nil,
                                     new: .string(String(repeating: "x", count: 2_000)), seq: 2, existingKeys: 1)
            try database.write([CommitBatch(id: 1, changes: [small], documents: [("o", ["a": 1])])])
            try database.write([CommitBatch(id: 2, changes: [large], documents: [("o", ["a": 1, "b": large.new!])])])
            #expect(try database.historyChangesOnDisk() == 0)
        }
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10, historyBytes: 1_000).load()
        #expect(state.seq == 2 && state.history.isEmpty)
    }

    @Test func secondOpenOfTheSameDirectoryIsRefusedWhileTheFirstIsOpen() throws {
        let directory = try TemporaryDirectory()
        let first = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
        #expect {
            _ = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
        } throws: { error in
            "\(error)".contains("in use")
        }
        _ = try first.load()
    }

    @Test func memberThatIsNotJSONMovesItsObjectToTheQuarantineNamingIt() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
            try database.connection.execute("""
                INSERT INTO objects (name) VALUES ('broken/1'), ('fine');
                INSERT INTO members (object, key, created_seq, created_index, value) VALUES ('broken/1', 'k', 1, 0, '[1,2');
                INSERT INTO members (object, key, created_seq, created_index, value) VALUES ('broken/1', 'j', 1, 1, '1');
                INSERT INTO members (object, key, created_seq, created_index, value) VALUES ('fine', 'k', 1, 0, '1');
                """)
        }
        let database = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
        let state = try database.load()
        #expect(state.documents == ["fine": ["k": 1]])
        #expect(database.quarantined.count == 1 && database.quarantined[0].contains(#""broken/1""#), "\(database.quarantined)")
        #expect(try database.connection.integer("SELECT COUNT(*) FROM quarantine WHERE object = 'broken/1'") == 2)
        #expect(try database.connection.integer("SELECT COUNT(*) FROM members WHERE object = 'broken/1'") == 0)
    }

    @Test func newerSchemaVersionIsRefused() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
            try database.connection.execute("PRAGMA user_version = 99")
        }
        #expect {
            _ = try StateDatabase(directory: directory.path, syncMode: .always, historyCapacity: 10)
        } throws: { error in
            "\(error)".contains("schema version 99")
        }
    }
}
