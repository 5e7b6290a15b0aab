import KVOEngine
import KVOTestSupport
import Testing

/// The access policy's decisions, its file format, and the engine's check.
@Suite struct AccessPolicyTests {
    static let alice = PeerCredentials(pid: 10, uid: 1000, gid: 1000)
    static let bob = PeerCredentials(pid: 11, uid: 1001, gid: 1001, groups: [50])

    static let policy = AccessPolicy(grants: [
        .init(.user(1000), objectPrefix: "app/", rights: .all),
        .init(.group(50), objectPrefix: "app/", rights: .read),
        .init(.anyone, objectPrefix: "public/", rights: .read),
    ], superusers: [0, 999])

    @Test func rightsWhenUserIsSuperuserAreAllOnEveryObject() {
        #expect(Self.policy.rights(of: PeerCredentials(pid: 1, uid: 0, gid: 0), on: "secret") == .all)
        #expect(Self.policy.rights(of: PeerCredentials(pid: 1, uid: 999, gid: 5), on: "secret") == .all)
    }

    @Test func rightsAddUpOverGrantsThatMatchPrefixAndSubject() {
        #expect(Self.policy.rights(of: Self.alice, on: "app/1") == .all)
        #expect(Self.policy.rights(of: Self.alice, on: "public/x") == .read)
        #expect(Self.policy.rights(of: Self.alice, on: "other") == [])
        // bob is in group 50 as a supplementary group only.
        #expect(Self.policy.rights(of: Self.bob, on: "app/1") == .read)
        #expect(Self.policy.rights(of: nil, on: "public/x") == .read)
        #expect(Self.policy.rights(of: nil, on: "app/1") == [])
    }

    @Test func rightsWhenNameIsCanonicallyEquivalentToAGrantedOneFollowTheStoresEquality() {
        let policy = AccessPolicy(grants: [.init(.user(1000), objectPrefix: "a", rights: .write)])
        // "a" + combining acute is "á", the same object as precomposed "á", which "a" does not prefix.
        #expect(policy.rights(of: Self.alice, on: "a\u{301}b") == [])
        #expect(policy.rights(of: Self.alice, on: "\u{E1}b") == [])
        #expect(policy.rights(of: Self.alice, on: "ab") == .write)
    }

    @Test func initFromJSONReadsEverySubjectKind() throws {
        let text = #"""
        {"grants": [
          {"uid": 1000, "prefix": "app/", "allow": ["read", "write"]},
          {"gid": 50, "prefix": "app/", "allow": ["read"]},
          {"user": "alice", "prefix": "a/", "allow": ["write"]},
          {"group": "staff", "prefix": "", "allow": ["read"]},
          {"anyone": true, "prefix": "public/", "allow": ["read"]}
        ]}
        """#
        let policy = try AccessPolicy(json: Array(text.utf8), superusers: [0],
                                      userID: { $0 == "alice" ? 1000 : nil }, groupID: { $0 == "staff" ? 60 : nil })
        #expect(policy.grants == [
            .init(.user(1000), objectPrefix: "app/", rights: .all),
            .init(.group(50), objectPrefix: "app/", rights: .read),
            .init(.user(1000), objectPrefix: "a/", rights: .write),
            .init(.group(60), objectPrefix: "", rights: .read),
            .init(.anyone, objectPrefix: "public/", rights: .read),
        ])
    }

    @Test(arguments: [
        (#"[]"#, "must be a JSON object"),
        (#"{"grant": []}"#, "unknown field \"grant\""),
        (#"{"grants": [{"uid": 1, "gid": 2, "prefix": "", "allow": ["read"]}]}"#, "exactly one of"),
        (#"{"grants": [{"prefix": "", "allow": ["read"]}]}"#, "exactly one of"),
        (#"{"grants": [{"uid": -1, "prefix": "", "allow": ["read"]}]}"#, "id from 0"),
        (#"{"grants": [{"uid": 1, "allow": ["read"]}]}"#, "\"prefix\" must be a string"),
        (#"{"grants": [{"uid": 1, "prefix": "", "allow": []}]}"#, "non-empty"),
        (#"{"grants": [{"uid": 1, "prefix": "", "allow": ["observe"]}]}"#, "unknown right \"observe\""),
        (#"{"grants": [{"user": "nosuchuser", "prefix": "", "allow": ["read"]}]}"#, "no user named"),
        (#"{"grants": [{"anyone": false, "prefix": "", "allow": ["read"]}]}"#, "must be true"),
        (#"{"grants": [{"uid": 1, "prefix": "", "allow": ["read"], "deny": true}]}"#, "unknown field \"deny\""),
        (#"{"grants": [{"uid": 1, "prefix": "app/", "allow": ["backup"]}]}"#, "its grant's \"prefix\" must be \"\""),
    ])
    func initFromJSONWhenFileIsWrongThrowsSayingWhat(text: String, expected: String) {
        do {
            _ = try AccessPolicy(json: Array(text.utf8), superusers: [0], userID: { _ in nil }, groupID: { _ in nil })
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    // MARK: The engine's check

    private func fixture() -> EngineFixture {
        EngineFixture(configuration: EngineConfiguration(accessPolicy: Self.policy))
    }

    @Test func handleWhenWriteIsForbiddenRepliesForbiddenAndChangesNothing() {
        let fixture = fixture()
        let engine = fixture.engine
        let owner = fixture.makeClient()
        owner.credentials = Self.alice
        let reader = fixture.makeClient()
        reader.credentials = Self.bob
        fixture.handle(#"{"op":"observe","object":"app/1","keyPath":"k","options":["new"]}"#, from: reader)
        fixture.handle(#"{"op":"set","object":"app/1","keyPath":"k","value":1}"#, from: owner)
        _ = fixture.take(from: owner).lines
        let seq = engine.store.seq
        for request in [
            #"{"op":"set","id":1,"object":"app/1","keyPath":"k","value":2}"#,
            #"{"op":"delete","id":2,"object":"app/1"}"#,
            #"{"op":"insert","id":3,"object":"app/1","keyPath":"list","value":2}"#,
        ] {
            fixture.handle(request, from: reader)
        }
        let replies = fixture.take(from: reader).lines.filter { $0["event"] == nil }
        #expect(replies.count == 4)
        #expect(replies.dropFirst().allSatisfy { $0["error"]?["code"] == "forbidden" })
        #expect(engine.store.seq == seq)
        #expect(engine.store.value("app/1", at: ["k"]) == 1)
    }

    @Test func handleWhenObserveIsForbiddenRegistersNothingAndGetRevealsNothing() {
        let fixture = fixture()
        let engine = fixture.engine
        let stranger = fixture.makeClient()
        stranger.credentials = PeerCredentials(pid: 12, uid: 2000, gid: 2000)
        fixture.handle(#"{"op":"observe","object":"app/1","keyPath":"k","options":["new","initial"]}"#, from: stranger)
        fixture.handle(#"{"op":"get","object":"app/none"}"#, from: stranger)
        fixture.handle(#"{"op":"get","object":"public/none"}"#, from: stranger)
        fixture.handle(#"{"op":"unobserveAll"}"#, from: stranger)
        fixture.handle(#"{"op":"info"}"#, from: stranger)
        let lines = fixture.take(from: stranger).lines
        #expect(lines.map { $0["error"]?["code"] } == ["forbidden", "forbidden", "not_found", nil, nil])
        #expect(lines[0]["error"]?["message"] == "uid 2000 may not read or observe app/1")
        #expect(engine.shared.observationCount == 0)
    }

    @Test func backupIsForSuperusersAndABackupGrantOnEveryObjectOnly() throws {
        let text = #"{"grants": [{"uid": 1000, "prefix": "", "allow": ["read", "write"]}, {"gid": 50, "prefix": "", "allow": ["backup"]}]}"#
        let policy = try AccessPolicy(json: Array(text.utf8), superusers: [0, 999], userID: { _ in nil }, groupID: { _ in nil })
        #expect(policy.mayBackUp(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(policy.mayBackUp(PeerCredentials(pid: 1, uid: 999, gid: 999)))
        #expect(policy.mayBackUp(Self.bob), "bob is in group 50")
        #expect(!policy.mayBackUp(Self.alice), "reading and writing everything is no backup grant")
        #expect(!policy.mayBackUp(nil))
        // A grant made in code under a prefix covers no backup either.
        #expect(!AccessPolicy(grants: [.init(.user(1000), objectPrefix: "a/", rights: .backup)]).mayBackUp(Self.alice))

        let fixture = EngineFixture(configuration: EngineConfiguration(accessPolicy: policy))
        let client = fixture.makeClient()
        client.credentials = Self.alice
        fixture.handle(#"{"op":"backup","id":1}"#, from: client)
        fixture.handle(#"{"op":"backup","id":2,"offset":0}"#, from: client)
        let replies = fixture.take(from: client).lines
        #expect(replies.map { $0["error"]?["code"] } == ["forbidden", "forbidden"])
        #expect(replies.first?["error"]?["message"]?.stringValue?.hasPrefix("uid 1000 may not take a backup") == true)
    }

    @Test func handleWithoutPolicyAllowsEveryone() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        client.credentials = PeerCredentials(pid: 1, uid: 65534, gid: 65534)
        fixture.handle(#"{"op":"set","object":"x","keyPath":"k","value":1}"#, from: client)
        #expect(fixture.take(from: client).lines.first?["ok"] == true)
    }
}
