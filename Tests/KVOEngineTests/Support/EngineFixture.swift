import KVOValues
import Synchronization
import Testing
@testable import KVOEngine

/// The one driver of the engine tests: an engine with clients, driven by
/// request lines as a daemon would, and the lines each client got back, as
/// text and parsed.
///
///     let fixture = EngineFixture()
///     let client = fixture.makeClient()
///     let output = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: client)
///     output.reply.member("seq")   // 1
///
/// Clients made here are closed when the fixture goes away, before the engine,
/// so none outlives the shared controller it points to.
final class EngineFixture {
    let engine: Engine
    /// The throttle's and the await deadlines' clock, in milliseconds: only the test moves it.
    let clock = ManualClock()
    private var clients: [ClientController] = []

    /// An engine of `configuration`, its throttle clock the fixture's ``clock``.
    init(configuration: EngineConfiguration = EngineConfiguration()) {
        var configuration = configuration
        let clock = clock
        configuration.throttleClock = { clock.now.load(ordering: .relaxed) }
        engine = Engine(configuration: configuration)
    }

    /// Drives an engine made elsewhere (restored from a saved state, with a change log).
    init(engine: Engine) {
        self.engine = engine
    }

    deinit {
        for client in clients { engine.closeClient(client) }
        finishSlicedWork()
    }

    /// Does the work left for later turns (what the daemon does a slice per
    /// turn); returns how many slices it took.
    @discardableResult
    func finishSlicedWork() -> Int {
        var slices = 0
        while engine.hasSlicedWork {
            engine.continueSlicedWork()
            slices += 1
        }
        return slices
    }

    /// A fixture and its first client: a suite's stored properties in one line.
    static func withClient() -> (EngineFixture, ClientController) {
        let fixture = EngineFixture()
        return (fixture, fixture.makeClient())
    }

    /// A fixture and two clients (one that acts, one that watches).
    static func withTwoClients() -> (EngineFixture, ClientController, ClientController) {
        let fixture = EngineFixture()
        return (fixture, fixture.makeClient(), fixture.makeClient())
    }

    var store: Store { engine.store }
    var shared: SharedController { engine.shared }

    func makeClient() -> ClientController {
        let client = engine.makeClient()
        clients.append(client)
        return client
    }

    /// Handles `line` (no terminator) from `client`; returns all the client's
    /// pending output: this request's events and reply, and anything before.
    @discardableResult
    func send(_ line: String, from client: ClientController,
              sourceLocation: SourceLocation = #_sourceLocation) -> WireOutput {
        handle(line, from: client)
        return take(from: client, sourceLocation: sourceLocation)
    }

    /// Handles `line` from `client`, leaving its output where it is (for
    /// tests of what piles up there).
    func handle(_ line: String, from client: ClientController) {
        Array(line.utf8).withUnsafeBytes { engine.handle(line: $0, from: client) }
    }

    /// Sends `line` from a client of its own, closed once its output is taken.
    @discardableResult
    func send(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> WireOutput {
        let client = engine.makeClient()
        defer { engine.closeClient(client) }
        return send(line, from: client, sourceLocation: sourceLocation)
    }

    /// Sends `request` written as compact JSON.
    @discardableResult
    func send(_ request: JSONValue, from client: ClientController,
              sourceLocation: SourceLocation = #_sourceLocation) -> WireOutput {
        send(request.jsonString, from: client, sourceLocation: sourceLocation)
    }

    /// Sends `request` and expects a success reply.
    @discardableResult
    func ok(_ request: JSONValue, from client: ClientController,
            sourceLocation: SourceLocation = #_sourceLocation) -> WireOutput {
        let output = send(request, from: client, sourceLocation: sourceLocation)
        #expect(output.replies.count == 1, "\(output)", sourceLocation: sourceLocation)
        #expect(output.reply.member("ok") == true, "\(request.jsonString) → \(output)",
                sourceLocation: sourceLocation)
        return output
    }

    /// Sends `request` and expects exactly one line back: an error reply with `code`.
    @discardableResult
    func fails(_ request: JSONValue, from client: ClientController, code: String,
               sourceLocation: SourceLocation = #_sourceLocation) -> WireOutput {
        let output = send(request, from: client, sourceLocation: sourceLocation)
        #expect(output.lines.count == 1, "\(output)", sourceLocation: sourceLocation)
        #expect(output.reply.member("ok") == false, "\(request.jsonString) → \(output)",
                sourceLocation: sourceLocation)
        #expect(output.reply.errorCode == code, "\(request.jsonString) → \(output)",
                sourceLocation: sourceLocation)
        return output
    }

    /// Takes `client`'s pending output (events sent to it by others' requests).
    func take(from client: ClientController, sourceLocation: SourceLocation = #_sourceLocation) -> WireOutput {
        var bytes: [UInt8] = []
        client.takeOutput(into: &bytes)
        return WireOutput(parsing: bytes, sourceLocation: sourceLocation)
    }

    /// The value at `keyPath` of `object` as `get` reports it, or nil on any error.
    func value(_ object: String, _ keyPath: String? = nil) -> JSONValue? {
        let reader = makeClient()
        defer { engine.closeClient(reader) }
        var request: JSONValue = ["op": "get", "object": .string(object)]
        if let keyPath, case .object(var members) = request {
            members["keyPath"] = .string(keyPath)
            request = .object(members)
        }
        let reply = send(request, from: reader).reply
        guard reply.member("ok") == true else { return nil }
        return reply.member("value")
    }

    /// The store's current `seq`, read directly.
    var seq: UInt64 { engine.store.seq }
}

/// The lines a client received, as text and parsed; each must be a complete JSON line.
struct WireOutput: CustomStringConvertible {
    var lines: [JSONValue]
    /// The same lines as they were written, byte for byte (no terminators).
    var text: [String]

    init(parsing bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        lines = []
        text = []
        guard !bytes.isEmpty else { return }
        #expect(bytes.last == UInt8(ascii: "\n"), "output does not end with a newline", sourceLocation: sourceLocation)
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            text.append(String(decoding: line, as: UTF8.self))
            do {
                lines.append(try JSONReader.parse(line))
            } catch {
                Issue.record("output line is not JSON (\(error)): \(String(decoding: line, as: UTF8.self))",
                             sourceLocation: sourceLocation)
                lines.append(.null)
            }
        }
    }

    var events: [JSONValue] { lines.filter(\.isEvent) }
    var replies: [JSONValue] { lines.filter { !$0.isEvent } }
    /// The one reply, or null when there is not exactly one.
    var reply: JSONValue { replies.count == 1 ? replies[0] : .null }
    var isEmpty: Bool { lines.isEmpty }

    var description: String { "[" + lines.map(\.jsonString).joined(separator: ", ") + "]" }
}

/// Milliseconds that only the test advances.
final class ManualClock: Sendable {
    let now = Atomic<UInt64>(1_000)
    func advance(by milliseconds: UInt64) { now.add(milliseconds, ordering: .relaxed) }
}

/// Records what a ``ClientController`` tells its delegate (FBKVOTesting's
/// recording observer, for the output side).
final class RecordingOutputDelegate: ClientOutputDelegate {
    var hasOutputCalls = 0
    var congestedCalls = 0
    var disconnectReasons: [String] = []

    func clientControllerHasOutput(_ controller: ClientController) { hasOutputCalls += 1 }
    func clientControllerBecameCongested(_ controller: ClientController) { congestedCalls += 1 }
    func clientController(_ controller: ClientController, mustDisconnectBecause reason: String) {
        disconnectReasons.append(reason)
    }
}

extension JSONValue {
    var intValue: Int? {
        if case .number(let number) = self { return number.intValue }
        return nil
    }

    /// The member `name` of an object; nil for a missing member or a non-object.
    func member(_ name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[name]
    }

    /// The member names of an object, sorted; empty for anything else.
    var memberNames: [String] {
        guard case .object(let members) = self else { return [] }
        return members.keys.sorted()
    }

    /// `keyPath` of an event, as text.
    var eventKeyPath: String? {
        guard case .string(let text)? = member("keyPath") else { return nil }
        return text
    }

    /// Whether this is an event line (it has an `event` member).
    var isEvent: Bool { member("event") != nil }

    /// `error.code` of an error reply.
    var errorCode: String? {
        guard case .string(let code)? = member("error")?.member("code") else { return nil }
        return code
    }

    /// `error.message` of an error reply.
    var errorMessage: String? {
        guard case .string(let message)? = member("error")?.member("message") else { return nil }
        return message
    }

    /// The same value with every object's members sorted by name, so that two
    /// values compare equal whatever order their members were written in.
    var sortedMembers: JSONValue {
        switch self {
        case .array(let elements):
            return .array(elements.map(\.sortedMembers))
        case .object(let members):
            let sorted = members.sorted { $0.key < $1.key }.map { ($0.key, $0.value.sortedMembers) }
            return .object(JSONObject(uniqueKeysWithValues: sorted))
        default:
            return self
        }
    }
}

/// Expects `actual` to be `expected`, member order aside: every member present
/// and no other, so a stray `new` or `old` fails the check.
func expectJSON(_ actual: JSONValue?, _ expected: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual?.sortedMembers == expected.sortedMembers,
            "got \(actual?.jsonString ?? "nothing"), expected \(expected.jsonString)", sourceLocation: sourceLocation)
}

/// Expects `actual` to be exactly `expected`, one by one (member order aside).
func expectJSON(_ actual: [JSONValue], _ expected: [JSONValue], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual.map(\.sortedMembers) == expected.map(\.sortedMembers),
            "got \(actual.map(\.jsonString)), expected \(expected.map(\.jsonString))", sourceLocation: sourceLocation)
}

/// A key path from its wire form; the test's own literals are always valid.
func keyPath(_ text: String) -> ObservedPath {
    ObservedPath(components: text.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
}
