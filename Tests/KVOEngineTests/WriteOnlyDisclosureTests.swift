import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 row 10: a client that may write an object but not read it must
/// not learn its value's size: `info`'s memory account moved by the length
/// of the value it overwrote, and a memory refusal said how much a write
/// would add over the value it replaced.
@Suite struct WriteOnlyDisclosureTests {
    static let dropbox = PeerCredentials(pid: 20, uid: 1000, gid: 1000)
    static let policy = AccessPolicy(grants: [
        .init(.user(1000), objectPrefix: "drop/", rights: .write),
        .init(.user(1000), objectPrefix: "mine/", rights: .all),
    ])
    let fixture = EngineFixture(configuration: EngineConfiguration(maxMemory: 200_000, accessPolicy: Self.policy))
    let owner: ClientController
    let writeOnly: ClientController

    init() {
        owner = fixture.makeClient()
        owner.credentials = PeerCredentials(pid: 21, uid: 0, gid: 0)
        writeOnly = fixture.makeClient()
        writeOnly.credentials = Self.dropbox
    }

    private func memory(_ client: ClientController) -> JSONValue? {
        fixture.ok(["op": "info"], from: client).reply.member("memory")
    }

    @Test func infoTellsAWriteOnlyClientNoFigureThatFollowsValuesSizes() {
        fixture.ok(["op": "set", "object": "drop/box", "keyPath": "secret", "value": .string(String(repeating: "s", count: 5_000))],
                   from: owner)
        let before = memory(writeOnly)
        fixture.ok(["op": "set", "object": "drop/box", "keyPath": "secret", "value": "x"], from: writeOnly)
        let after = memory(writeOnly)
        #expect(before == after, "the account moved by the secret's length: \(before.map(\.jsonString) ?? "-") -> \(after.map(\.jsonString) ?? "-")")
        #expect(after?.member("documents") == nil && after?.member("total") == nil)
        #expect(after?.member("limit") == 200_000)
        #expect(fixture.ok(["op": "info"], from: writeOnly).reply.member("clientMemory") == nil)
        // The one who may read everything still sees every figure.
        #expect(memory(owner)?.member("documents") != nil)
    }

    @Test func aMemoryRefusalTellsAWriteOnlyClientNoSize() {
        fixture.ok(["op": "set", "object": "drop/box", "keyPath": "secret", "value": .string(String(repeating: "s", count: 1_000))],
                   from: owner)
        let big = JSONValue.string(String(repeating: "b", count: 300_000))
        let refused = fixture.fails(["op": "set", "object": "drop/box", "keyPath": "secret", "value": big],
                                    from: writeOnly, code: "limit_exceeded")
        let message = refused.reply.member("error")?.member("message")?.stringValue ?? ""
        #expect(message == "kvod may hold 200000 bytes (--max-memory), and this request would bring it over; delete something first")
        // Nor where it may read: how much kvod holds counts the values it may not.
        let own = fixture.fails(["op": "set", "object": "mine/x", "keyPath": "k", "value": big], from: writeOnly,
                                code: "limit_exceeded")
        #expect(own.reply.member("error")?.member("message")?.stringValue == message)
        // The one who may read everything is told the figures.
        let told = fixture.fails(["op": "set", "object": "mine/x", "keyPath": "k", "value": big], from: owner,
                                 code: "limit_exceeded")
        #expect(told.reply.member("error")?.member("message")?.stringValue?.contains("would add") == true)
    }
}
