import KVOValues
import Testing
@testable import KVOEngine

/// Issue 17, item 14: a client that may write an object but not read it
/// learns whether its change was applied, and nothing of the stored value:
/// every failure that depends on it is one and the same `forbidden`.
@Suite struct WriteOnlyErrorsTests {
    static let policy = AccessPolicy(grants: [
        .init(.user(1000), objectPrefix: "drop/", rights: .write),
        .init(.user(1000), objectPrefix: "both/", rights: .all),
    ])
    let fixture = EngineFixture(configuration: EngineConfiguration(accessPolicy: Self.policy))
    let owner: ClientController
    let writer: ClientController

    init() {
        owner = fixture.makeClientAs(PeerCredentials(pid: 1, uid: 0, gid: 0))
        writer = fixture.makeClientAs(PeerCredentials(pid: 2, uid: 1000, gid: 1000))
        for object in ["drop/box", "both/box"] {
            fixture.ok(["op": "set", "object": .string(object), "value": ["list": [1, 2, 3], "text": "secret"]],
                       from: owner)
        }
    }

    /// The value at `keyPath` of `object` as the owner reads it.
    private func value(_ object: String, _ keyPath: String? = nil) -> JSONValue? {
        var request: JSONObject = ["op": "get", "object": .string(object)]
        if let keyPath { request["keyPath"] = .string(keyPath) }
        return fixture.send(.object(request), from: owner).reply.member("value")
    }

    /// Requests that fail, each for a reason the stored value gives.
    static func failing(_ object: String) -> [JSONValue] {
        let target = JSONValue.string(object)
        return [
            ["op": "remove", "object": target, "keyPath": "list", "index": 3],
            ["op": "replace", "object": target, "keyPath": "list", "indexes": [0, 7], "values": [0, 0]],
            ["op": "insert", "object": target, "keyPath": "list", "index": 4, "value": 0],
            ["op": "insert", "object": target, "keyPath": "text", "value": 0],
            ["op": "remove", "object": target, "keyPath": "missing", "index": 0],
            ["op": "remove", "object": "drop/none", "keyPath": "list", "index": 0],
            ["op": "set", "object": target, "keyPath": "text.inner", "value": 0],
            ["op": "set", "object": target, "keyPath": "list.inner", "value": 0],
            ["op": "batch", "ops": [["op": "set", "object": "both/box", "keyPath": "ok", "value": 1],
                                    ["op": "remove", "object": target, "keyPath": "list", "index": 9]]],
        ]
    }

    @Test func failuresOnAnObjectTheClientMayNotReadAreAllTheSameForbidden() {
        var errors: Set<String> = []
        for request in Self.failing("drop/box") {
            let reply = fixture.fails(request, from: writer, code: "forbidden").reply
            let error = reply.member("error")
            #expect(error?.memberNames.filter { $0 != "index" } == ["code", "message"], "no detail: \(reply)")
            let message = reply.errorMessage ?? ""
            #expect(!message.contains("3") && !message.contains("string") && !message.contains("count"),
                    "nothing of the value: \(message)")
            errors.insert(message.replacingOccurrences(of: "ops[1]: ", with: "")
                .replacingOccurrences(of: "drop/none", with: "drop/box"))
        }
        #expect(errors.count == 1, "one message for every reason: \(errors)")
        expectJSON(value("drop/box"), ["list": [1, 2, 3], "text": "secret"])
        #expect(value("both/box", "ok") == nil, "the batch changed nothing")
    }

    @Test func theSameFailuresOnAnObjectTheClientMayReadKeepTheirReasons() {
        let codes = Self.failing("both/box").map { fixture.send($0, from: writer).reply.errorCode }
        #expect(codes == ["index_out_of_range", "index_out_of_range", "index_out_of_range", "not_an_array",
                          "not_found", "forbidden", "not_an_object", "not_an_object", "index_out_of_range"])
        // And the owner, who may everything, is told why on the write-only prefix too.
        #expect(fixture.send(Self.failing("drop/box")[0], from: owner).reply.errorCode == "index_out_of_range")
    }

    @Test func conditionsNeedTheRightToRead() {
        for condition: (String, JSONValue) in [("ifModSeq", 0), ("ifValue", "secret")] {
            var request: JSONObject = ["op": "set", "object": "drop/box", "keyPath": "text", "value": "x"]
            request[condition.0] = condition.1
            let reply = fixture.fails(.object(request), from: writer, code: "forbidden").reply
            #expect(reply.errorMessage?.contains(condition.0) == true, "\(reply)")
            let batch: JSONValue = ["op": "batch", "ops": [.object(request)]]
            #expect(fixture.fails(batch, from: writer, code: "forbidden").reply.member("error")?.member("index") == 0)
            // Where it may read, the same condition is checked, and here holds.
            request["object"] = "both/box"
            let current = fixture.ok(["op": "get", "object": "both/box", "keyPath": "text"], from: writer).reply
            request[condition.0] = condition.0 == "ifModSeq" ? current.member("modSeq")! : current.member("value")!
            fixture.ok(.object(request), from: writer)
        }
        // Plain writes are the grant's: applied.
        fixture.ok(["op": "set", "object": "drop/box", "keyPath": "text", "value": "replaced"], from: writer)
        fixture.ok(["op": "remove", "object": "drop/box", "keyPath": "list", "index": 0], from: writer)
        expectJSON(value("drop/box"), ["list": [2, 3], "text": "replaced"])
    }

    @Test func aWholeDocumentThatIsNotAnObjectIsTheRequestsFaultAndSaidSo() {
        let reply = fixture.fails(["op": "set", "object": "drop/box", "value": [1]], from: writer,
                                  code: "not_an_object").reply
        #expect(reply.errorMessage?.contains("a whole document must be a JSON object, not array") == true)
    }
}
