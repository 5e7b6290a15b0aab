import KVOClient
import KVOTestSupport
import Testing

/// A batch's ops written with literals: no `as JSONValue`, no `try` (this file compiling is half the test).
@Suite(.onDedicatedThread) struct BatchLiteralTests {
    @Test func literalValuesAreJSONValuesAndNeedNoTry() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let operations: [WriteOperation] = [
            .set("queue/running", "job7", to: ["cmd": "backup", "tries": 2]),
            .set("queue/running", "count", to: 1),
            .set("queue/running", "owner", to: "xsc"),
        ]
        try await connection.batch(operations)
        #expect(try await connection.get("queue/running") == ["job7": ["cmd": "backup", "tries": 2], "count": 1,
                                                               "owner": "xsc"])
    }
}
