import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import Testing

/// Random changes made by a real engine, committed in random groups the way
/// kvod groups them, must read back as exactly the engine's documents: every
/// value, every object (also `{}`), every member in its place, every modSeq.
@Suite struct StateDatabaseDifferentialTests {
    final class Recorder: ChangeLog {
        var changes: [ChangeRecord] = []
        func record(_ change: ChangeRecord) { changes.append(change) }
    }

    static func randomRequest(_ rng: inout SplitMix64) -> String {
        func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
        let object = pick(["a", "b", "c"])
        let keyPath = pick(["k1", "k2", "k3", "k4", "k5", "k1.x", "k2.y.z", "list"])
        let value = pick(["1", #""s""#, "null", #"{"x":1,"y":{"z":2}}"#, "[1,2]", "{}"])
        switch Int.random(in: 0..<11, using: &rng) {
        case 0...3: return #"{"op":"set","object":"\#(object)","keyPath":"\#(keyPath)","value":\#(value)}"#
        case 4...5: return #"{"op":"delete","object":"\#(object)","keyPath":"\#(pick(["k1", "k2", "k3"]))"}"#
        case 6: return #"{"op":"delete","object":"\#(object)","keyPath":"\#(keyPath)"}"#
        case 7: return #"{"op":"delete","object":"\#(object)"}"#
        case 8: return #"{"op":"insert","object":"\#(object)","keyPath":"list","values":[7,8]}"#
        case 10: return #"{"op":"set","object":"\#(object)","value":{"k1":{"x":3},"list":[1]}}"#
        default: return #"{"op":"remove","object":"\#(object)","keyPath":"list","index":0}"#
        }
    }

    @Test(arguments: [UInt64(11), 12, 13, 14])
    func documentsReadBackExactlyAfterRandomGroupCommits(seed: UInt64) throws {
        let folder = try TemporaryDirectory()
        let engine = Engine()
        let recorder = Recorder()
        engine.changeLog = recorder
        let client = engine.makeClient()
        var rng = SplitMix64(seed: seed)
        var batchID: UInt64 = 0
        do {
            let database = try StateDatabase(directory: folder.path, syncMode: .off, historyCapacity: 50)
            for _ in 0..<300 {
                var batches: [CommitBatch] = []
                // One write may carry several batches, as the writer merges what queued up.
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    for _ in 0..<Int.random(in: 1...6, using: &rng) {
                        Array(Self.randomRequest(&rng).utf8).withUnsafeBytes { engine.handle(line: $0, from: client) }
                    }
                    guard !recorder.changes.isEmpty else { continue }
                    var touched: [String] = []
                    for change in recorder.changes where !touched.contains(change.object) { touched.append(change.object) }
                    batchID += 1
                    var modSeqs: [String: ModSeqTree] = [:]
                    for name in touched { modSeqs[name] = engine.store.modSeqs(name) }
                    batches.append(CommitBatch(id: batchID, changes: recorder.changes,
                                               documents: touched.map { ($0, engine.store.document($0)) },
                                               modSeqs: modSeqs))
                    recorder.changes = []
                }
                try database.write(batches)
            }
        }
        #expect(engine.store.seq > 300)
        let state = try StateDatabase(directory: folder.path, syncMode: .off, historyCapacity: 50).load()
        #expect(state.seq == engine.store.seq)
        #expect(state.history == Array(engine.history.all.suffix(50)))
        #expect(state.documents.count == engine.store.objectCount)
        for (name, document) in state.documents {
            #expect(document == engine.store.document(name), "object \(name)")
            #expect(state.modSeqs[name] == engine.store.modSeqs(name), "modSeqs of \(name)")
        }
    }
}

extension StateDatabaseDifferentialTests {
    @Test func memberRemovedAndMadeAgainInOneGroupMovesToTheEnd() throws {
        let folder = try TemporaryDirectory()
        let engine = Engine()
        let recorder = Recorder()
        engine.changeLog = recorder
        let client = engine.makeClient()
        func run(_ lines: [String]) -> CommitBatch {
            for line in lines { Array(line.utf8).withUnsafeBytes { engine.handle(line: $0, from: client) } }
            defer { recorder.changes = [] }
            return CommitBatch(id: recorder.changes.last!.seq, changes: recorder.changes, documents: [("o", engine.store.document("o"))])
        }
        do {
            let database = try StateDatabase(directory: folder.path, syncMode: .off, historyCapacity: 10)
            try database.write([run([#"{"op":"set","object":"o","keyPath":"k1","value":1}"#,
                                     #"{"op":"set","object":"o","keyPath":"k2","value":2}"#])])
            try database.write([run([#"{"op":"delete","object":"o","keyPath":"k1"}"#,
                                     #"{"op":"set","object":"o","keyPath":"k1","value":3}"#])])
        }
        let state = try StateDatabase(directory: folder.path, syncMode: .off, historyCapacity: 10).load()
        #expect(Array(state.documents["o"]?.keys ?? []) == ["k2", "k1"])
        #expect(state.documents["o"] == engine.store.document("o"))
    }
}
