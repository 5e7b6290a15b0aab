// Runs those of docs/CLIENT.md's snippets that need nothing but a running kvod
// (at $KVOD_SOCKET or the default path); the others in this folder are built, not run.
import KVOClient

@main
struct ClientSnippets {
    @MainActor
    static func main() async throws {
        let socketPath = KVOConnection.defaultSocketPath()
        try await OnErrorSnippet.run(socketPath: socketPath)
        try await IsolationSnippet.run(socketPath: socketPath)
        try await ConditionsSnippet.run(socketPath: socketPath)
    }
}
