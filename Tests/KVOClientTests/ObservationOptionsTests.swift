import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// KVOClient registers the options its subscriptions need (issue 30 item 1):
/// kvod sends no prior events and no values nobody reads, and a subscription
/// that needs more registers the observation again without losing or
/// repeating a change for the ones already live.
@Suite(.onDedicatedThread) struct ObservationOptionsTests {
    @Test(.timeLimit(.minutes(1))) func kvodIsAskedOnlyForTheOptionsTheSubscriptionsNeed() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var changes = connection.changes(of: "o", keyPath: "k", options: [.new, .initial]).makeAsyncIterator()
        #expect(try await changes.next()?.isInitial == true)
        let options = try await connection.observations().map(\.options)
        #expect(options == [[.new, .initial]], "no old, no prior: \(options)")
        try await connection.set("o", "k", to: 1)
        let change = try await changes.next()
        #expect(change?.new == 1 && change?.old == nil && change?.isPrior == false)
    }

    @Test(.timeLimit(.minutes(1))) func whenTheLastSubscriptionNeedingPriorLeavesKvodIsAskedForLess() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var first = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        let second = Task {
            for try await _ in connection.changes(of: "o", keyPath: "k", options: [.new, .old, .prior]) {}
        }
        try await waitUntil("kvod sends old and prior for the second", timeout: 10) {
            try await connection.observations().map(\.options) == [[.new, .old, .prior]]
        }
        second.cancel()
        try await waitUntil("kvod is asked for new alone once the second left", timeout: 10) {
            try await connection.observations().map(\.options) == [[.new]]
        }
        // The same observation, narrowed in place: the first one goes on hearing every change.
        try await connection.set("o", "k", to: 1)
        let change = try await first.next()
        #expect(change?.new == 1 && change?.isPrior == false)
    }

    @Test(.timeLimit(.minutes(1))) func aSubscriptionThatNeedsMoreRegistersAgainAndTheOthersMissNothing() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var first = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        try await waitUntil("kvod holds the observation", timeout: 10) { try await connection.observations().count == 1 }
        // Another connection sets 1…400 flat out while the second subscription joins.
        let sets = 2_000
        let writer = try connect(kvod)
        let writing = Task {
            for value in 1...sets { try await writer.set("o", "k", to: value) }
        }
        try await waitUntil("some changes were made", timeout: 10) { (try? await connection.get("o", "k")) != nil }
        var second = connection.changes(of: "o", keyPath: "k", options: [.new, .old, .prior]).makeAsyncIterator()
        try await writing.value
        var seen: [Int] = []
        while seen.last != sets {
            guard case .number(let n)? = try await first.next()?.new, let value = n.intValue else {
                Issue.record("a change without a number")
                return
            }
            seen.append(value)
        }
        #expect(seen == Array(1...sets), "every change once, in order, across the registration made again")
        #expect(try await connection.observations().map(\.options) == [[.new, .old, .prior]])
        // The second one gets priors and old values from its start; its last change is the last set.
        var lastOfSecond: Change?
        while lastOfSecond?.new != JSONValue.number(JSONNumber(sets)) {
            let change = try #require(try await second.next())
            if change.isPrior { #expect(change.new == nil) } else { #expect(change.old != nil) }
            lastOfSecond = change
        }
    }
}
