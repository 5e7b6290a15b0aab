import KVOValues

/// The limits on what clients may make kvod hold: observations per
/// connection (`--max-observations-per-connection`) and, over everything,
/// the memory account (`--max-memory`). Each refusal is `limit_exceeded`
/// naming the limit and its value, and is counted in ``Engine/refusals``.
extension Engine {
    /// What one observation counts in the memory account: its entries in
    /// the client's and the shared controller's tables, its key path and
    /// options (about 175 bytes measured; rounded up).
    public static let observationBytes = 256

    /// kvod's memory account, in bytes: the documents' size estimate
    /// (``Store/sizeEstimate``), every observation at ``observationBytes``
    /// plus its context's bytes, the history's bytes, the lease table's and
    /// the throttled observations' open intervals, the aggregates computed
    /// key paths keep, and the requests that wait over etcd behind a
    /// client's changes in flight.
    /// What `--max-memory` bounds. Counted, not measured: it is the same for
    /// the same requests, which RSS is not.
    public var memoryEstimate: Int {
        store.sizeEstimate + observationsBytes + history.bytes + leaseTable.bytes + shared.throttleSchedule.bytes
            + shared.waitingRequestBytes + shared.aggregateBytes
    }

    /// The observations' part of the memory account: each at
    /// ``observationBytes``, and their contexts.
    var observationsBytes: Int {
        shared.observationCount * Self.observationBytes + shared.contextBytes
    }

    /// Whether `added` new observations of `client`, each with `context`,
    /// pass both limits: what ``checkObservationLimits(adding:context:for:)``
    /// checks, without counting a refusal.
    func admitsObservations(_ added: Int, context: JSONValue? = nil, for client: ClientController) -> Bool {
        guard client.observationCount + added <= configuration.maxObservationsPerClient else { return false }
        let limit = configuration.maxMemory
        return limit <= 0
            || memoryEstimate + added * (Self.observationBytes + ObservationInfo.contextBytes(of: context)) <= limit
    }

    /// Refuses `added` new observations of `client`, each with `context`,
    /// over the per-connection limit or the memory limit.
    func checkObservationLimits(adding added: Int, context: JSONValue? = nil,
                                for client: ClientController) throws(KVOEngineError) {
        guard added > 0 else { return }
        let limit = configuration.maxObservationsPerClient
        guard client.observationCount + added <= limit else {
            refusals.observations += 1
            throw KVOEngineError(.limitExceeded, """
                a connection may hold \(limit) observations (--max-observations-per-connection); \
                this one holds \(client.observationCount)
                """)
        }
        try checkMemory(growth: added * (Self.observationBytes + ObservationInfo.contextBytes(of: context)),
                        of: added == 1 ? "an observation" : "\(added) observations")
    }

    /// Refuses `change` when it grows the documents past the memory limit.
    /// Changes that shrink them (a `delete`, a smaller value) always pass.
    func admit(_ change: ChangeRecord) throws(KVOEngineError) {
        guard configuration.maxMemory > 0, !admitsEveryChange else { return }
        try checkMemory(growth: change.storeGrowth, of: "this change")
    }

    /// Refuses `growth` bytes more when they would bring the memory account
    /// over `--max-memory`; `what` names them in the message.
    func checkMemory(growth: Int, of what: String) throws(KVOEngineError) {
        let limit = configuration.maxMemory
        guard limit > 0, growth > 0 else { return }
        let held = memoryEstimate
        guard held + growth > limit else { return }
        refusals.memory += 1
        throw KVOEngineError(.limitExceeded, """
            \(Self.memoryRefusalStart)\(limit) bytes (--max-memory); it holds about \(held), and \(what) would add \(growth); \
            delete something first
            """)
    }

    /// How a memory refusal's message starts (``concealing(_:of:for:)`` knows it by that).
    static let memoryRefusalStart = "kvod may hold "
}
