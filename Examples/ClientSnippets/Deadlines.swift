// docs/CLIENT.md, "Deadlines"; built, not run.
// snippet.hide
import KVOClient

func deadlinesSnippet() throws -> KVOConnection {
    // snippet.show
    let connection = try KVOConnection(requestTimeout: .seconds(5))
    // snippet.hide
    return connection
}
