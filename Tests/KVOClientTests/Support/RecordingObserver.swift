import Dispatch
import KVOClient
import KVOTestSupport

/// An observer that records what reaches it (FBKVOTesting's recording observer).
final class RecordingObserver: Sendable {
    let changes = Recorder<Change>()
    let errors = Recorder<KVOClientError>()

    /// For the action form: `action: RecordingObserver.nameChanged`.
    func nameChanged(_ change: Change) { changes.append(change) }
}

/// Returns once everything already queued on `queue` has run: after a
/// request's reply, the callbacks for the events it caused have been queued.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async { continuation.resume() }
    }
}

/// A connection to a test's kvod.
func connect(_ kvod: KVODProcess, reconnect: KVOConnection.ReconnectPolicy = .never) throws -> KVOConnection {
    try KVOConnection(socketPath: kvod.socketPath, reconnect: reconnect)
}
