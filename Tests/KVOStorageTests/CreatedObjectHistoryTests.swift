import Foundation
@testable import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// Whether a change made its object (``ChangeRecord/createdObject``) comes
/// back from the data directory, so that a replay after a restart says
/// `"old":null` for it as the live event did, not `{}` (issue 33, row 8).
@Suite struct CreatedObjectHistoryTests {
    /// `o` made by a set under a key path, emptied, deleted, made again by an
    /// insert, deleted, and made by a whole document; `p` by a set.
    static var changes: [ChangeRecord] { [
        ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: 1, existingKeys: 0,
                     createdObject: true),
        ChangeRecord(object: "o", path: ["k"], kind: .setting, old: 1, new: nil, seq: 2, existingKeys: 1, memberIndex: 0),
        ChangeRecord(object: "o", path: [], kind: .setting, old: [:], new: nil, seq: 3, existingKeys: 0),
        ChangeRecord(object: "o", path: ["a", "list"], kind: .insertion, indexes: [0], old: nil, new: [1], seq: 4,
                     existingKeys: 0, createdObject: true),
        ChangeRecord(object: "p", path: ["x"], kind: .setting, old: nil, new: 2, seq: 5, existingKeys: 0,
                     createdObject: true),
        ChangeRecord(object: "o", path: [], kind: .setting, old: ["a": ["list": [1]]], new: nil, seq: 6, existingKeys: 0),
        ChangeRecord(object: "o", path: [], kind: .setting, old: nil, new: ["k": 3], seq: 7, existingKeys: 0),
        ChangeRecord(object: "o", path: ["j"], kind: .setting, old: nil, new: 4, seq: 8, existingKeys: 0),
    ] }

    static let documents: [(String, JSONObject?)] = [("o", ["k": 3, "j": 4]), ("p", ["x": 2])]

    @Test func whetherAChangeMadeItsObjectComesBackAfterAReload() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
            try database.write([CommitBatch(id: 1, changes: Self.changes, documents: Self.documents)])
        }
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10).load()
        #expect(state.history.map(\.createdObject) == Self.changes.map(\.createdObject))
        #expect(state.history == Self.changes)
    }

    /// A row trimmed at load is rewritten from what was loaded: the flag stays.
    @Test func aRowRewrittenByATrimKeepsTheFlag() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
            try database.write([CommitBatch(id: 1, changes: Self.changes, documents: Self.documents)])
        }
        _ = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 5).load()
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10).load()
        #expect(state.history.map(\.seq) == Array(4...8))
        #expect(state.history.map(\.createdObject) == Self.changes[3...].map(\.createdObject))
    }

    /// What a replay of `observe` (whole document of `object`, new and old,
    /// since `since`) says about an engine restored from `state`: each event's `old`.
    static func replayedOld(of object: String, since: UInt64, from state: SavedState) throws -> [JSONValue?] {
        let engine = Engine()
        engine.restore(state)
        let client = engine.makeClient()
        defer { engine.closeClient(client) }
        let request = #"{"op":"observe","object":"\#(object)","options":["new","old"],"since":\#(since)}"#
        Array(request.utf8).withUnsafeBytes { engine.handle(line: $0, from: client) }
        var bytes: [UInt8] = []
        client.takeOutput(into: &bytes)
        let lines = bytes.split(separator: UInt8(ascii: "\n")).map { try? JSONReader.parse(Array($0), maxDepth: 64) }
        #expect(lines.last??["ok"] == true, "\(String(decoding: bytes, as: UTF8.self))")
        return lines.dropLast().map { $0?["old"] }
    }

    /// A version 5 directory whose one history row (format 2, no flag) holds
    /// `changes` from `first` on.
    static func makeVersion5(_ directory: String, from first: Int) throws {
        do {
            _ = try StateDatabase(directory: directory, syncMode: .off, historyCapacity: 10)
        }
        // Format 2 is format 3 without the flag.
        var encoder = HistoryBatchEncoder()
        encoder.begin()
        for change in changes[(first - 1)...] {
            encoder.append(ChangeRecord(object: change.object, path: change.path, kind: change.kind,
                                        indexes: change.indexes, old: change.old, new: change.new, seq: change.seq,
                                        existingKeys: change.existingKeys, memberIndex: change.memberIndex))
        }
        var blob = encoder.bytes
        blob[0] = 2
        let connection = try SQLiteConnection(path: directory + "/" + StateDatabase.fileName)
        try connection.execute("""
            PRAGMA user_version = 5;
            INSERT INTO objects (name) VALUES ('o'), ('p');
            INSERT INTO members (object, key, created_seq, created_index, value)
                VALUES ('o', 'k', 7, 0, '3'), ('o', 'j', 8, 0, '4'), ('p', 'x', 5, 0, '2');
            """)
        let insert = try connection.prepare("INSERT INTO history_batches (last_seq, first_seq, changes) VALUES (8, ?, ?)")
        insert.bind(1, Int64(first))
        insert.bind(2, blob: blob)
        try insert.run()
    }

    /// Version 5's rows have no flag: they still load, and a change counts
    /// as having made its object where the history shows that the object did
    /// not exist before it: the history starts at seq 1 (nothing existed
    /// before), or the change follows the object's deletion.
    @Test func rowsWrittenWithoutTheFlagLoadAndTheFlagIsDerivedFromAHistoryThatStartsAtOne() throws {
        let directory = try TemporaryDirectory()
        try Self.makeVersion5(directory.path, from: 1)
        let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
        #expect(try database.connection.integer("PRAGMA user_version") == StateDatabase.schemaVersion)
        let state = try database.load()
        #expect(state.seq == 8 && state.history.map(\.seq) == Array(1...8))
        #expect(state.documents["o"] == ["k": 3, "j": 4])
        #expect(state.history.map(\.createdObject) == Self.changes.map(\.createdObject))
        #expect(try Self.replayedOld(of: "o", since: 0, from: state)
            == [.null, ["k": 1], [:], .null, ["a": ["list": [1]]], .null, ["k": 3]])
        #expect(try Self.replayedOld(of: "p", since: 0, from: state) == [.null])
    }

    /// Where the history does not show it (the first change of an object
    /// it holds, when it does not start at 1), the flag is not known and the
    /// replay says `{}` for the document before, as version 5 did.
    @Test func withoutTheStartOfTheHistoryOnlyAChangeAfterItsObjectsDeletionIsKnownToHaveMadeIt() throws {
        let directory = try TemporaryDirectory()
        try Self.makeVersion5(directory.path, from: 2)
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10).load()
        #expect(state.history.map(\.seq) == Array(2...8))
        #expect(state.history.map(\.createdObject) == [false, false, true, false, false, false, false])
        #expect(try Self.replayedOld(of: "o", since: 1, from: state)
            == [["k": 1], [:], .null, ["a": ["list": [1]]], .null, ["k": 3]])
        #expect(try Self.replayedOld(of: "p", since: 1, from: state) == [[:]])
    }
}
