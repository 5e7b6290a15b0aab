import KVOProtocol
import KVOValues

/// kvod's memory account and the limits on what clients may make it hold:
/// observations per connection (`--max-observations-per-connection`) and,
/// over everything, `--max-memory`. Each refusal is `limit_exceeded` naming
/// the limit and its value, and is counted in ``refusals``.
///
/// Counted, not measured: the account is the same for the same requests,
/// which RSS is not. It reads the parts it adds up from their owners.
final class ResourceAccount {
    /// What one observation counts in the memory account: its entries in
    /// the client's and the shared controller's tables, its key path and
    /// options (about 175 bytes measured; rounded up).
    static let observationBytes = 256
    /// How a memory refusal's message starts (``Engine/concealing(_:of:for:)`` knows it by that).
    static let memoryRefusalStart = "kvod may hold "

    private let store: Store
    private let shared: SharedController
    private let history: ChangeHistory
    private let leases: LeaseTable
    private let maxMemory: Int
    private let maxObservationsPerClient: Int
    /// Requests refused for a limit on resources, for `info`.
    @exclusivity(unchecked) var refusals = EngineRefusals()
    /// Set while a batch that passed the memory check as a whole is applied
    /// op by op: one of its ops alone may grow what the others shrink.
    @exclusivity(unchecked) var admitsEveryChange = false

    init(store: Store, shared: SharedController, history: ChangeHistory, leases: LeaseTable,
         configuration: EngineConfiguration) {
        (self.store, self.shared, self.history, self.leases) = (store, shared, history, leases)
        maxMemory = configuration.maxMemory
        maxObservationsPerClient = configuration.maxObservationsPerClient
    }

    /// The memory account, in bytes: the documents' size estimate
    /// (``Store/sizeEstimate``), every observation at ``observationBytes``
    /// plus its context's bytes, the history's bytes, the lease table's and
    /// the throttled observations' open intervals, the aggregates computed
    /// key paths keep, and the requests that wait over etcd behind a
    /// client's changes in flight. What `--max-memory` bounds.
    var memoryEstimate: Int {
        store.sizeEstimate + observationsBytes + history.bytes + leases.bytes + shared.throttleSchedule.bytes
            + shared.waitingRequestBytes + shared.aggregateBytes
    }

    /// The observations' part: each at ``observationBytes``, and their contexts.
    private var observationsBytes: Int {
        shared.observationCount * Self.observationBytes + shared.contextBytes
    }

    /// `info`'s `memory`: the account by part and the limit, or (`tellsSizes`
    /// false: a client that may not read every value) the limit alone.
    func memoryFigures(tellsSizes: Bool) -> JSONObject {
        let number = { (value: Int) in JSONValue.number(JSONNumber(value)) }
        guard tellsSizes else { return JSONObject([InfoFigure.Memory.limit: number(maxMemory)]) }
        return JSONObject([
            InfoFigure.Memory.total: number(memoryEstimate),
            .documents: number(store.sizeEstimate),
            .observations: number(observationsBytes),
            .history: number(history.bytes),
            .leases: number(leases.bytes),
            .throttles: number(shared.throttleSchedule.bytes),
            .aggregates: number(shared.aggregateBytes),
            .requests: number(shared.waitingRequestBytes),
            .limit: number(maxMemory),
        ])
    }

    /// Whether `added` new observations of `client`, each with `context`,
    /// pass both limits: what ``checkObservationLimits(adding:context:for:)``
    /// checks, without counting a refusal.
    func admitsObservations(_ added: Int, context: JSONValue?, for client: ClientController) -> Bool {
        guard client.observationCount + added <= maxObservationsPerClient else { return false }
        return maxMemory <= 0
            || memoryEstimate + added * (Self.observationBytes + ObservationInfo.contextBytes(of: context)) <= maxMemory
    }

    /// Refuses `added` new observations of `client`, each with `context`,
    /// over the per-connection limit or the memory limit.
    func checkObservationLimits(adding added: Int, context: JSONValue?,
                                for client: ClientController) throws(KVOEngineError) {
        guard added > 0 else { return }
        guard client.observationCount + added <= maxObservationsPerClient else {
            refusals.observations += 1
            throw KVOEngineError(.limitExceeded, """
                a connection may hold \(maxObservationsPerClient) observations (--max-observations-per-connection); \
                this one holds \(client.observationCount)
                """)
        }
        try checkMemory(growth: added * (Self.observationBytes + ObservationInfo.contextBytes(of: context)),
                        of: added == 1 ? "an observation" : "\(added) observations")
    }

    /// Refuses `change` when it grows the documents past the memory limit.
    /// Changes that shrink them (a `delete`, a smaller value) always pass.
    /// Inlined: every change asks, and without `--max-memory` the answer is one load.
    @inline(__always)
    func admit(_ change: ChangeRecord) throws(KVOEngineError) {
        guard maxMemory > 0, !admitsEveryChange else { return }
        try checkMemory(growth: change.storeGrowth, of: "this change")
    }

    /// Refuses `growth` bytes more when they would bring the memory account
    /// over `--max-memory`; `what` names them in the message.
    func checkMemory(growth: Int, of what: String) throws(KVOEngineError) {
        guard maxMemory > 0, growth > 0 else { return }
        let held = memoryEstimate
        guard held + growth > maxMemory else { return }
        refusals.memory += 1
        throw KVOEngineError(.limitExceeded, """
            \(Self.memoryRefusalStart)\(maxMemory) bytes (--max-memory); it holds about \(held), and \(what) would add \
            \(growth); delete something first
            """)
    }
}
