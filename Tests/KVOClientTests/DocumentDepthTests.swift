import KVOClient
import KVOTestSupport
import KVOValues
import Testing

/// KVOClient reads whatever kvod accepts: the deepest object kvod stores is a
/// reply and an event like any other, not a protocol violation.
@Suite(.onDedicatedThread) struct DocumentDepthTests {
    @Test func getAndObserveOfTheDeepestObjectSucceed() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let keys = Array(repeating: "k", count: DocumentDepth.limit - 2).joined(separator: ".")
        // An insert's event carries the elements in an array: one level more than the object.
        let changes = connection.changes(of: "o", keyPath: "k", options: [.new])
        var iterator = changes.makeAsyncIterator()
        try await connection.insert("o", keys, [[1]] as [JSONValue])
        let whole = try await connection.get("o")
        var depth = 0
        var value = whole
        while case .object(let members) = value, let inner = members["k"] {
            depth += 1
            value = inner
        }
        #expect(depth == DocumentDepth.limit - 2 && value == [[1]])
        #expect(try await iterator.next()?.kind == .setting)
    }
}
