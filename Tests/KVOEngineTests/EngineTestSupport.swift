import Testing
@testable import KVOEngine

/// An engine with clients, driven by request lines as a daemon would, and the
/// lines each client got back, parsed.
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
    private var clients: [ClientController] = []

    init(configuration: EngineConfiguration = EngineConfiguration()) {
        engine = Engine(configuration: configuration)
    }

    deinit {
        for client in clients { engine.closeClient(client) }
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
        let bytes = Array(line.utf8)
        bytes.withUnsafeBytes { engine.handle(line: $0, from: client) }
        return take(from: client, sourceLocation: sourceLocation)
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

/// The lines a client received, parsed; each must be a complete JSON line.
struct WireOutput: CustomStringConvertible {
    var lines: [JSONValue]

    init(parsing bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        lines = []
        guard !bytes.isEmpty else { return }
        #expect(bytes.last == UInt8(ascii: "\n"), "output does not end with a newline", sourceLocation: sourceLocation)
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
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

extension JSONValue {
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
