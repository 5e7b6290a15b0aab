import CCurl
import KVOValues

/// One watch stream: the gateway's `/v3/watch` response, read as it arrives,
/// cut into messages, fragments joined, and reported as ``EtcdWatchUpdate``s.
public final class EtcdWatch {
    public let request: EtcdWatchRequest
    /// The member this watch reads from.
    public let endpoint: String
    /// The revision of the newest event reported (before any: the start revision
    /// less one, or for a watch from now the revision it was created at). Resume from the one after: nothing is missed or repeated.
    /// Progress notifications do not move it: etcd 3.4.23 may notify progress
    /// past events of an unsynced watcher it has not sent yet (fixed in later
    /// 3.4 releases), and resuming past them would lose those events.
    public private(set) var lastRevision: Int64 = 0
    /// Whether the watch is over (ended, compacted, cancelled by etcd or by ``cancel()``).
    public private(set) var isFinished = false

    /// Weak: a watch handle may outlive its client, and then has nothing to cancel.
    private weak var multi: CurlMulti?
    private let handler: (EtcdWatchUpdate) -> Void
    private var transfer: CurlTransfer?
    private var stream: JSONObjectStream
    /// Events of a fragmented response awaiting its last fragment, and their bytes.
    private var fragments: [EtcdWatchEvent] = []
    private var fragmentBytes = 0
    private let maxMessageBytes: Int
    /// Messages read off the stream, fragments counted one by one (for tests).
    private(set) var messagesReceived = 0

    init(request: EtcdWatchRequest, endpoint: String, maxMessageBytes: Int, multi: CurlMulti,
         handler: @escaping (EtcdWatchUpdate) -> Void) {
        self.request = request
        self.endpoint = endpoint
        self.multi = multi
        self.handler = handler
        self.maxMessageBytes = maxMessageBytes
        stream = JSONObjectStream(maxObjectBytes: maxMessageBytes)
        lastRevision = max(0, request.startRevision - 1)
    }

    /// Whether the watch's stream is left unread (``pauseReceiving()``).
    public private(set) var isPaused = false

    /// Leaves the stream unread until ``resumeReceiving()``: etcd holds what
    /// follows, as for any slow watcher, and nothing is lost. Messages already
    /// read still reach the handler.
    public func pauseReceiving() {
        guard !isPaused, let transfer else { return }
        isPaused = true
        transfer.pauseReceiving(true)
    }

    /// Reads the stream again after ``pauseReceiving()``.
    public func resumeReceiving() {
        guard isPaused else { return }
        isPaused = false
        transfer?.pauseReceiving(false)
    }

    /// Stops the watch; its handler hears nothing more.
    public func cancel() {
        isFinished = true
        guard let transfer else { return }
        self.transfer = nil
        // The transfer's closures hold this watch alive while it runs: let go of it.
        transfer.onBytes = nil
        transfer.onDone = nil
        multi?.cancel(transfer)
    }

    /// Runs the watch on `transfer`. Until it ends, the transfer's closures keep
    /// this object alive, so a caller need not keep the handle to keep watching.
    func start(_ transfer: CurlTransfer, onEnd: @escaping (EtcdError?) -> Void) {
        self.transfer = transfer
        transfer.onBytes = { [self] transfer in receive(transfer.takeReceived()) }
        transfer.onDone = { [self, unowned transfer] code, status in
            self.transfer = nil
            transfer.onBytes = nil
            transfer.onDone = nil
            guard !isFinished else { return }
            let error = ended(transfer, code: code, status: status)
            onEnd(error)
            finish(.ended(error))
        }
        multi?.add(transfer)
    }

    /// Reports a watch that could not start.
    func fail(_ error: EtcdError) {
        finish(.ended(error))
    }

    private func finish(_ update: EtcdWatchUpdate) {
        guard !isFinished else { return }
        cancel()
        handler(update)
    }

    /// Why a stream that etcd did not cancel ended.
    private func ended(_ transfer: CurlTransfer, code: CURLcode, status: Int) -> EtcdError {
        if code == CURLE_WRITE_ERROR && transfer.overflowed { return .responseTooLarge(limit: transfer.maxBytes) }
        if code != CURLE_OK {
            return .unreachable(endpoint: endpoint, detail: String(cString: curl_easy_strerror(code)), mayHaveApplied: false)
        }
        if status != 200, let json = try? JSONReader.parse(transfer.received) {
            return EtcdClient.gatewayError(json, status: status)
        }
        return .unreachable(endpoint: endpoint, detail: "the watch stream ended (HTTP \(status))", mayHaveApplied: false)
    }

    private func receive(_ bytes: [UInt8]) {
        do throws(EtcdError) {
            for message in try stream.append(bytes) {
                guard !isFinished else { return }
                try handle(message)
            }
        } catch {
            finish(.ended(error))
        }
    }

    private func handle(_ message: [UInt8]) throws(EtcdError) {
        messagesReceived += 1
        let read: EtcdWatchMessage
        do {
            read = try EtcdWatchMessage(message)
        } catch {
            throw .malformedResponse("a watch message: \(error.message)")
        }
        if read.hasError {
            // Rare: read whole, as the gateway's errors are (EtcdClient.gatewayError).
            guard let json = try? JSONReader.parse(message) else { throw .malformedResponse("a watch message") }
            return finish(.ended(EtcdClient.gatewayError(json, status: 200)))
        }
        guard read.hasResult else { throw .malformedResponse("a watch message without result") }
        let header = try EtcdResponseHeader(read.header)
        if read.canceled == .bool(true) {
            let compactRevision = try JSONValue.int64(read.compactRevision, "compact_revision")
            if compactRevision > 0 { return finish(.compacted(compactRevision: compactRevision)) }
            var reason = "cancelled by etcd"
            if case .string(let text)? = read.cancelReason { reason = text }
            return finish(.cancelled(reason: reason))
        }
        if read.created == .bool(true) {
            // A watch from now reports the changes after the revision it was created at.
            if request.startRevision == 0 { lastRevision = header.revision }
            return handler(.created(header))
        }
        let events = try read.events.get()
        if events.isEmpty { return handler(.progress(revision: header.revision)) }
        fragments += events
        fragmentBytes += message.count
        if fragmentBytes > maxMessageBytes { throw .responseTooLarge(limit: maxMessageBytes) }
        if read.fragment == .bool(true) { return }
        let whole = fragments
        fragments = []
        fragmentBytes = 0
        lastRevision = max(lastRevision, whole.last?.kv.modRevision ?? header.revision)
        handler(.events(header, whole))
    }
}
