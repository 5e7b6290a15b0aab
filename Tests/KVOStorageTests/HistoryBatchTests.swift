import Foundation
@testable import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// The history as a row per commit (`history_batches`, schema version 3; format 2 since 4, 3 since 6),
/// beside the row per change that versions 1 and 2 wrote.
@Suite struct HistoryBatchTests {
    /// The first one makes the object.
    static func change(_ seq: UInt64, object: String = "o", key: String = "k") -> ChangeRecord {
        ChangeRecord(object: object, path: [key], kind: .setting, old: seq > 1 ? .number(JSONNumber(Int(seq) - 1)) : nil,
                     new: .number(JSONNumber(Int(seq))), seq: seq, existingKeys: seq > 1 ? 1 : 0, createdObject: seq == 1)
    }

    /// Every kind of field: collection kinds with indexes, a removed member's
    /// index, a cause, absent and null values, a NUL and an NFD name (stored NFC).
    /// Computed: LeakSanitizer takes a global JSONValue's tagged pointers for leaks.
    static var varied: [ChangeRecord] { [
        ChangeRecord(object: "p", path: ["tags"], kind: .insertion, indexes: [0, 1], old: nil, new: ["x", "y"], seq: 1,
                     existingKeys: 0),
        ChangeRecord(object: "p", path: ["tags"], kind: .replacement, indexes: [1], old: ["y"], new: ["z"], seq: 2,
                     existingKeys: 1),
        ChangeRecord(object: "p", path: ["tags"], kind: .removal, indexes: [0], old: ["x"], new: nil, seq: 3, existingKeys: 1),
        ChangeRecord(object: "q\u{0}x", path: ["a", "b"], kind: .setting, old: .null, new: 1, seq: 4, existingKeys: 2),
        ChangeRecord(object: "p", path: ["gone"], kind: .setting, old: "v", new: nil, seq: 5, existingKeys: 1,
                     memberIndex: 3, cause: .ttl),
        ChangeRecord(object: "caf\u{65}\u{301}", path: [], kind: .setting, old: ["k": .null], new: nil, seq: 6,
                     existingKeys: 0, cause: .disconnect),
    ] }

    @Test func oneCommitWritesOneRowAndEveryFieldComesBack() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
            try database.write([
                CommitBatch(id: 1, changes: Array(Self.varied[..<3]), documents: [("p", ["tags": ["z"]])]),
                CommitBatch(id: 2, changes: Array(Self.varied[3...]),
                            documents: [("p", [:]), ("q\u{0}x", ["a": ["b": 1]]), ("caf\u{e9}", nil)]),
            ])
            #expect(try database.connection.integer("SELECT COUNT(*) FROM history_batches") == 1)
            #expect(try database.connection.integer("SELECT COUNT(*) FROM history") == 0)
        }
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10).load()
        #expect(state.seq == 6)
        #expect(state.history == Self.varied)
        #expect(state.history.last.map { Array($0.object.utf8) } == Array("caf\u{e9}".utf8))
    }

    @Test func rowsOfAChangeEachFromVersion2LoadBeforeTheBatchRowsWrittenAfterThem() throws {
        let directory = try TemporaryDirectory()
        do {
            _ = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
        }
        do {
            // What a version 2 kvod left: three changes, a row each.
            let connection = try SQLiteConnection(path: directory.path + "/" + StateDatabase.fileName)
            try SchemaMigrationTests.makeVersion4Tables(connection)
            try connection.execute("""
                DROP TABLE history_batches;
                PRAGMA user_version = 2;
                INSERT INTO objects VALUES ('o');
                INSERT INTO members VALUES ('o', 'k', 1, 0, '3');
                INSERT INTO history (seq, object, key_path, kind, old, new, existing_keys)
                    VALUES (1, 'o', 'k', 'setting', NULL, '1', 0), (2, 'o', 'k', 'setting', '1', '2', 1),
                           (3, 'o', 'k', 'setting', '2', '3', 1);
                """)
        }
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
            #expect(try database.connection.integer("PRAGMA user_version") == StateDatabase.schemaVersion)
            let state = try database.load()
            #expect(state.seq == 3 && state.history == (1...3).map { Self.change($0) })
            try database.write([CommitBatch(id: 1, changes: [Self.change(4), Self.change(5)], documents: [("o", ["k": 5])])])
        }
        let state = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10).load()
        #expect(state.seq == 5)
        #expect(state.history == (1...5).map { Self.change($0) })
        #expect(state.documents["o"] == ["k": 5])

        // Trimmed to 2, the old rows go and a later larger limit does not bring them back.
        _ = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 2).load()
        let larger = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 10)
        #expect(try larger.load().history.map(\.seq) == [4, 5])
        #expect(try larger.connection.integer("SELECT COUNT(*) FROM history") == 0)
    }

    @Test func loadTrimsARowThatStraddlesTheLimitSoALargerLimitLaterBringsNothingBack() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 100)
            try database.write([CommitBatch(id: 1, changes: (1...10).map { Self.change($0) }, documents: [("o", ["k": 10])])])
        }
        do {
            let smaller = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 3)
            #expect(try smaller.load().history.map(\.seq) == [8, 9, 10])
            #expect(try smaller.historyChangesOnDisk() == 3)
        }
        let larger = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 100)
        let state = try larger.load()
        #expect(state.history == (8...10).map { Self.change($0) })
        #expect(state.seq == 10)
    }

    @Test func unreadableBatchRowIsQuarantinedWithTheHistoryBeforeItAndTheSeqGoesOn() throws {
        let directory = try TemporaryDirectory()
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 100)
            try database.write([CommitBatch(id: 1, changes: (1...3).map { Self.change($0) }, documents: [("o", ["k": 3])])])
            try database.write([CommitBatch(id: 2, changes: (4...5).map { Self.change($0) }, documents: [("o", ["k": 5])])])
            try database.write([CommitBatch(id: 3, changes: [Self.change(6)], documents: [("o", ["k": 6])])])
            // A value in the middle row that is not JSON: change 4's new value, `4` (change 5's old), becomes `{`.
            let select = try database.connection.prepare("SELECT changes FROM history_batches WHERE last_seq = 5")
            var blob = try #require(try select.step() ? select.blob(0) : nil)
            let four = try #require(blob.lastIndex(of: UInt8(ascii: "4")))
            blob[four] = UInt8(ascii: "{")
            select.reset()
            let update = try database.connection.prepare("UPDATE history_batches SET changes = ? WHERE last_seq = 5")
            update.bind(1, blob: blob)
            try update.run()
        }
        do {
            let database = try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 100)
            let state = try database.load()
            #expect(state.seq == 6)
            #expect(state.history == [Self.change(6)])
            #expect(database.quarantined.contains { $0.hasPrefix("history batch row 5 moved to the quarantine table") },
                    "\(database.quarantined)")
            #expect(try database.connection.integer("SELECT COUNT(*) FROM quarantine WHERE source = 'history_batches'") == 1)
            #expect(try database.connection.integer("SELECT COUNT(*) FROM history_batches") == 1)
        }
        #expect(try StateDatabase(directory: directory.path, syncMode: .off, historyCapacity: 100).load().seq == 6)
    }

    @Test func everyTruncationOfARowIsRefusedOrAShorterRunNeverACrash() throws {
        var encoder = HistoryBatchEncoder()
        encoder.begin()
        for change in Self.varied { encoder.append(change) }
        let blob = encoder.bytes
        #expect(try HistoryBatchCodec.decode(blob, firstSeq: 1).map(\.seq) == Array(1...6))
        for count in 0..<blob.count {
            if let changes = try? HistoryBatchCodec.decode(Array(blob[..<count]), firstSeq: 1) {
                #expect(changes.count < Self.varied.count, "a prefix of \(count) bytes")
            }
        }
        #expect(throws: HistoryRowError.self) {
            try HistoryBatchCodec.decode([HistoryBatchCodec.format + 1] + blob.dropFirst(), firstSeq: 1)
        }
    }

    /// Format 2: a run of sets to one key path stores each value once, and
    /// every `old` comes back as it was written, also one that only equals
    /// the value before it (`1.0` after `1`).
    @Test func aRunOfSetsStoresEachValueOnceAndComesBackAsWritten() throws {
        let first: JSONValue = "the first value of the run", second: JSONValue = "the second value of the run"
        let run = [
            ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: first, seq: 1, existingKeys: 0),
            ChangeRecord(object: "o", path: ["k"], kind: .setting, old: first, new: second, seq: 2, existingKeys: 1),
            ChangeRecord(object: "o", path: ["k"], kind: .setting, old: second, new: 1, seq: 3, existingKeys: 1),
            ChangeRecord(object: "o", path: ["k"], kind: .setting, old: .number(JSONNumber(validatedLiteral: "1.0")),
                         new: 2, seq: 4, existingKeys: 1),
            ChangeRecord(object: "o", path: ["j"], kind: .setting, old: 2, new: 3, seq: 5, existingKeys: 1),
        ]
        var encoder = HistoryBatchEncoder()
        encoder.begin()
        for change in run { encoder.append(change) }
        let decoded = try HistoryBatchCodec.decode(encoder.bytes, firstSeq: 1)
        #expect(decoded == run)
        #expect(decoded[3].old?.jsonBytes == Array("1.0".utf8))
        let text = String(decoding: encoder.bytes, as: UTF8.self)
        #expect(text.components(separatedBy: "the first value").count == 2)
        #expect(text.components(separatedBy: "the second value").count == 2)
    }

    /// The encoder copies a plain string and a number's literal as they
    /// are and writes anything else with JSONWriter: every kind comes back,
    /// in a blob that grows well past its first buffer.
    @Test func stringsToEscapeNonASCIINamesAndALargeBlobComeBackAsWritten() throws {
        let values: [JSONValue] = ["", "plain", "quote \" backslash \\ newline \n tab \t", "caf\u{e9} \u{1F600}",
                                   .number(JSONNumber(validatedLiteral: "-1.5e3")), true, .null, ["a": [1, "b"]],
                                   .string(String(repeating: "long ", count: 400))]
        var changes: [ChangeRecord] = []
        for round in 0..<20 {
            for (index, value) in values.enumerated() {
                let seq = UInt64(changes.count + 1)
                changes.append(ChangeRecord(object: round % 2 == 0 ? "o" : "\u{c5}ngstr\u{f6}m", path: ["k\(index)", "n\u{e9}"],
                                            kind: .setting, old: round == 0 ? nil : value, new: value, seq: seq,
                                            existingKeys: round == 0 ? 0 : 2))
            }
        }
        var encoder = HistoryBatchEncoder()
        encoder.begin()
        for change in changes { encoder.append(change) }
        #expect(encoder.count > 16 * 1024)
        let decoded = try HistoryBatchCodec.decode(encoder.bytes, firstSeq: 1)
        #expect(decoded == changes)
        #expect(decoded.map { $0.new?.jsonBytes } == changes.map { $0.new?.jsonBytes })
        // begin() starts a new blob in the same buffer.
        encoder.begin()
        encoder.append(changes[2])
        #expect(try HistoryBatchCodec.decode(encoder.bytes, firstSeq: 3) == [changes[2]])
    }

    /// Rows a version 3 kvod wrote (format 1) are still read; a repeated
    /// `old` with no change before it is refused, not guessed.
    @Test func formatOneIsReadAndARepeatWithoutItsChangeIsRefused() throws {
        // setting o.k to 1: kind, flags (new), "o", path ["k"], no indexes, "1", existingKeys 0.
        let formatOne: [UInt8] = [1, 0, HistoryBatchCodec.hasNew, 1, 0x6f, 1, 1, 0x6b, 0, 1, 0, 0, 0, 0x31, 0]
        #expect(try HistoryBatchCodec.decode(formatOne, firstSeq: 7)
            == [ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: 7, existingKeys: 0)])
        var orphan = formatOne
        orphan[0] = HistoryBatchCodec.format
        orphan[2] |= HistoryBatchCodec.oldIsPreviousNew
        #expect(throws: HistoryRowError.self) { try HistoryBatchCodec.decode(orphan, firstSeq: 7) }
    }
}

extension StateDatabase {
    /// How many changes the history tables hold: a row each in `history`,
    /// a run each in `history_batches`.
    func historyChangesOnDisk() throws -> Int64? {
        try connection.integer("""
            SELECT (SELECT COUNT(*) FROM history)
            + (SELECT COALESCE(SUM(last_seq - first_seq + 1), 0) FROM history_batches)
            """)
    }
}
