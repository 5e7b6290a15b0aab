/// A request in flight that its caller may stop waiting for (``abandon(because:)``):
/// a `Txn` a member forwarded to a leader that died is lost with it, and etcd
/// says so only after its own request timeout (issue 35 item 5).
public final class EtcdRequest {
    /// The member the request went to (its last attempt's, when a refused
    /// connection moved it on).
    public private(set) var endpoint: String
    /// Whether its completion was told: an answer, a failure, or abandoned.
    public private(set) var isFinished = false
    private var transfer: CurlTransfer?
    private weak var multi: CurlMulti?
    private var fail: ((EtcdError) -> Void)?

    init(endpoint: String) {
        self.endpoint = endpoint
    }

    /// An attempt of the request went to `endpoint` on `transfer`; `fail` tells its completion.
    func attempt(_ transfer: CurlTransfer, to endpoint: String, on multi: CurlMulti, fail: @escaping (EtcdError) -> Void) {
        self.transfer = transfer
        self.endpoint = endpoint
        self.multi = multi
        self.fail = fail
    }

    /// The completion is about to be told.
    func finish() {
        isFinished = true
        transfer = nil
        fail = nil
    }

    /// Stops the transfer and tells the completion at once that the request
    /// failed after it was sent (``EtcdError/unreachable(endpoint:detail:mayHaveApplied:)``,
    /// `mayHaveApplied`: etcd may have it, and may still apply it). Nothing when it is finished.
    public func abandon(because reason: String) {
        guard !isFinished, let transfer, let fail else { return }
        finish()
        multi?.cancel(transfer)
        fail(.unreachable(endpoint: endpoint, detail: "abandoned: \(reason)", mayHaveApplied: true))
    }
}
