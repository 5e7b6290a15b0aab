// docs/CLIENT.md, "The socket, lost connections and reconnecting"; built, not run (ReconnectTests restart kvod under it).
// snippet.hide
import KVOClient

func reconnectingSnippet() async throws {
    // snippet.show
    let connection = try KVOConnection(reconnect: .retry(initialDelay: .milliseconds(50), maximumDelay: .seconds(2),
                                                         maximumAttempts: 100))
    do {
        for try await change in connection.changes(of: "printer/1", keyPath: "status", options: [.new]) {
            print("status:", change.new?.jsonString ?? "-")  // goes on across lost connections: no gap, no repeat
        }
    } catch let error where error.code == .compacted {
        // kvod could not replay what was missed (it restarted without its data, or --history was
        // too short): get the current value and observe afresh.
    } catch {
        // connection_lost: 100 attempts in a row failed (about 3 minutes at 2 s apart); or closed.
    }
    // snippet.hide
}
