import KVOClient
import KVOTestSupport
import Testing

/// `DeliveryOptions(compact: true)` (the default) against the real kvod: the
/// compact events decode into the very changes a full observer
/// (`compact: false`) gets.
@Suite(.onDedicatedThread) struct CompactDeliveryTests {
    @Test(.timeLimit(.minutes(1))) func aCompactStreamGetsTheSameChangesAsAFullOne() async throws {
        let kvod = try await KVODProcess()
        let fullConnection = try connect(kvod)
        let compactConnection = try connect(kvod)
        try await fullConnection.set("q", "jobs", to: ["a"])
        let options: ObservationOptions = [.new, .old, .initial, .prior]
        var full = fullConnection.changes(of: "q", keyPath: "jobs", options: options,
                                          delivery: DeliveryOptions(compact: false)).makeAsyncIterator()
        var compact = compactConnection.changes(of: "q", keyPath: "jobs", options: options,
                                                delivery: DeliveryOptions(compact: true)).makeAsyncIterator()
        let initialFull = try await full.next()
        let initialCompact = try await compact.next()
        #expect(initialFull?.isInitial == true && initialCompact == initialFull,
                "\(String(describing: initialCompact)) against \(String(describing: initialFull))")
        try await fullConnection.insert("q", "jobs", ["b", "c"])
        try await fullConnection.remove("q", "jobs", at: [0])
        try await fullConnection.set("q", "jobs", to: [])
        for _ in 0..<6 {  // three changes, each with its prior change
            let expected = try await full.next()
            let got = try await compact.next()
            #expect(got != nil && got == expected, "\(String(describing: got)) against \(String(describing: expected))")
        }
        #expect(try await compactConnection.observations().map(\.delivery) == [DeliveryOptions(compact: true)])
        #expect(try await fullConnection.observations().map(\.delivery) == [DeliveryOptions(compact: false)])
        #expect(DeliveryOptions.all.compact, "compact events by default")
    }

    @Test(.timeLimit(.minutes(1))) func aCompactPrefixStreamNamesTheObjectThatChanged() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var changes = connection.changes(prefix: "svc/", keyPath: "addr", options: [.new],
                                         delivery: DeliveryOptions(compact: true)).makeAsyncIterator()
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        let seq = try await connection.set("svc/db", "addr", to: "10.0.0.6")
        let change = try await changes.next()
        #expect(change?.object == "svc/db" && change?.prefix == "svc/" && change?.keyPath == "addr"
                    && change?.new == "10.0.0.6" && change?.kind == .setting && change?.seq == seq,
                "\(String(describing: change))")
    }
}
