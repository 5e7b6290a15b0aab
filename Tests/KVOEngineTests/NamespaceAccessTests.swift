import KVOValues
import Testing
@testable import KVOEngine

/// Issue 13, point 5: a client never hears of an object it may not read,
/// through `list` or a prefix observation.
@Suite struct NamespaceAccessTests {
    static let alice = PeerCredentials(pid: 10, uid: 1000, gid: 1000)
    static let policy = AccessPolicy(grants: [
        .init(.user(1000), objectPrefix: "s/open", rights: .read),
        .init(.anyone, objectPrefix: "", rights: .write),
    ])
    let fixture = EngineFixture(configuration: EngineConfiguration(accessPolicy: Self.policy))
    let reader: ClientController
    let writer: ClientController

    init() {
        reader = fixture.makeClient()
        reader.credentials = Self.alice
        writer = fixture.makeClient()
        writer.credentials = PeerCredentials(pid: 11, uid: 0, gid: 0)
    }

    private func set(_ object: String) {
        fixture.ok(["op": "set", "object": .string(object), "keyPath": "k", "value": 1], from: writer)
    }

    @Test func listLeavesOutWhatTheClientMayNotReadAndMoreCountsOnlyReadableNames() {
        for name in ["s/open1", "s/secret", "s/open2", "s/zsecret"] { set(name) }
        let page = fixture.ok(["op": "list", "prefix": "s/", "limit": 1], from: reader).reply
        expectJSON(page.member("objects"), ["s/open1"])
        #expect(page.member("more") == true)
        let rest = fixture.ok(["op": "list", "prefix": "s/", "after": "s/open1"], from: reader).reply
        expectJSON(rest.member("objects"), ["s/open2"])
        #expect(rest.member("more") == false)
    }

    @Test func prefixObservationGetsNoEventAndNoInitialEventForUnreadableObjects() {
        set("s/open1")
        set("s/secret")
        let reply = fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "k", "options": ["new", "initial"]],
                               from: reader)
        #expect(reply.events.map { $0.member("object") } == ["s/open1"])
        set("s/secret")
        set("s/open2")
        #expect(fixture.take(from: reader).events.map { $0.member("object") } == ["s/open2"])
        // A replay leaves them out too.
        let replay = fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "k", "options": ["new"],
                                 "context": 1, "since": 0], from: fixture.makeClientAs(Self.alice))
        #expect(Set(replay.events.compactMap { $0.member("object")?.jsonString }) == [#""s/open1""#, #""s/open2""#])
    }

    @Test func observingASingleForbiddenObjectStaysForbidden() {
        fixture.fails(["op": "observe", "object": "s/secret", "keyPath": "k"], from: reader, code: "forbidden")
        fixture.fails(["op": "observe", "object": "s/secret"], from: reader, code: "forbidden")
    }
}

extension EngineFixture {
    func makeClientAs(_ credentials: PeerCredentials) -> ClientController {
        let client = makeClient()
        client.credentials = credentials
        return client
    }
}
