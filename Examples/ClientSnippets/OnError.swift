// docs/CLIENT.md, "When an observation ends: onError"; run by ClientSnippets.
// snippet.hide
import Dispatch
import KVOClient

// snippet.show
/// Shows a printer's status, and why it stopped being kept up to date.
final class PrinterPanel {
    private(set) var status = "?"
    private(set) var problem: String?
    private var kvo: KVOController<PrinterPanel>?

    func start(connection: KVOConnection, queue: DispatchQueue) {
        // onError: (PrinterPanel, KVOClientError) -> Void, called on `queue` like the blocks.
        let kvo = KVOController(observer: self, connection: connection, queue: queue) { panel, error in
            panel.problem = "\(error.code): \(error.message)"
            print("ended:", error.code, error.isConnectionError ? "(every observation)" : "(one observation)")
        }
        kvo.observe("printer/1", keyPath: "status", options: [.new]) { panel, _, change in
            panel.status = (try? change.new(as: String.self)) ?? "?"
        }
        kvo.observe("printer/1", keyPath: "tray..paper") { _, _, _ in }  // an empty key: kvod refuses it
        self.kvo = kvo
    }
}
// snippet.hide

enum OnErrorSnippet {
    /// Prints `ended: bad_request (one observation)`, `status: idle`, `ended: closed (every observation)`.
    static func run(socketPath: String) async throws {
        let connection = try KVOConnection(socketPath: socketPath)
        let queue = DispatchQueue(label: "PrinterPanel")
        let panel = PrinterPanel()
        panel.start(connection: connection, queue: queue)
        // kvod answers in order and sends events before the reply: once the set
        // returns, the refusal and the change are queued; queue.sync waits for them.
        try await connection.set("printer/1", "status", to: "idle")
        queue.sync {}
        print("status:", panel.status)
        connection.close()
        queue.sync {}
    }
}
