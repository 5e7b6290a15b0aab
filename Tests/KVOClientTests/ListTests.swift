import KVOClient
import KVOTestSupport
import Testing

/// `list` against the real kvod: one page, and every name by paging.
@Suite(.onDedicatedThread) struct ListTests {
    @Test func listPageAndListPageThroughNamesUnderAPrefixInByteOrder() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        for name in ["a/e", "a/c", "a/a", "a/d", "a/b", "b/a", "a"] { try await connection.set(name, "k", to: 1) }

        let page = try await connection.listPage(prefix: "a/", limit: 2)
        #expect(page.objects == ["a/a", "a/b"] && page.more && page.seq >= 7)
        let next = try await connection.listPage(prefix: "a/", after: "a/b", limit: 3)
        #expect(next.objects == ["a/c", "a/d", "a/e"] && !next.more, "more is false when the last name was returned")

        #expect(try await connection.list(prefix: "a/", pageSize: 2) == ["a/a", "a/b", "a/c", "a/d", "a/e"])
        #expect(try await connection.list(prefix: "a/", pageSize: 5) == ["a/a", "a/b", "a/c", "a/d", "a/e"])
        #expect(try await connection.list() == ["a", "a/a", "a/b", "a/c", "a/d", "a/e", "b/a"])
        #expect(try await connection.list(prefix: "c").isEmpty)

        try await connection.delete("a/c")
        #expect(try await connection.list(prefix: "a/", pageSize: 1) == ["a/a", "a/b", "a/d", "a/e"])
    }

    @Test func listLimitsAreTheDaemons() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        do {
            _ = try await connection.listPage(limit: KVOConnection.maximumListLimit + 1)
            Issue.record("a list over the limit was served")
        } catch {
            #expect(error.code == .limitExceeded)
        }
        do {
            _ = try await connection.list(prefix: String(repeating: "p", count: 1025))
            Issue.record("a prefix over 1024 bytes was listed")
        } catch {
            #expect(error.code == .limitExceeded)
        }
    }
}
