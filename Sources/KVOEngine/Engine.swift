import KVOProtocol
import KVOValues

/// The whole of kvod that is not I/O: the store, the shared controller and
/// the clients, and the one function that answers a request line.
///
/// Loop-confined: every call comes from the daemon's one event-loop thread.
/// Replies and events are appended to each client's
/// ``ClientController/output``; the daemon writes them out.
public final class Engine {
    public let configuration: EngineConfiguration
    public let store: Store
    public let shared: SharedController
    /// The most recent changes, for `observe` with `since`.
    public let history: ChangeHistory
    /// Told of every change; nil keeps kvod in memory only.
    @exclusivity(unchecked) public var changeLog: ChangeLog?
    /// Names the history that seqs count: random for a new engine, restored
    /// with a saved state. Two kvods (or one restarted without its data) that
    /// reach the same seq have different epochs, so a resume point from one
    /// is never taken for the other's.
    @exclusivity(unchecked) public internal(set) var epoch = ResumePoint.newEpoch() {
        didSet { epochMember = Self.epochMember(epoch) }
    }
    /// `,"epoch":"…"` as an `observe`'s reply writes it: encoded once per epoch, not per reply.
    @exclusivity(unchecked) private(set) var epochMember: [UInt8] = []
    /// How many clients are connected.
    @exclusivity(unchecked) public internal(set) var clientCount = 0
    private var nextClientID = 1
    /// Ephemeral values and deadlines.
    let leaseTable: LeaseTable
    private let startedAt = ContinuousClock.now
    /// What the daemon reports about itself through `info` (loop lag,
    /// refused connections); the daemon keeps it up to date.
    public var daemonStatistics = DaemonStatistics()
    /// The memory account and the limits on what clients may make kvod hold.
    let resources: ResourceAccount
    /// Requests answered, by op, for `metrics`.
    @exclusivity(unchecked) public private(set) var requestCounts = RequestCounts()
    /// Writes the `metrics` op's text: the daemon's, which keeps the metrics
    /// (the engine only counts). Nil: the op fails.
    public var metricsText: (() -> String)?
    /// Takes and reads the snapshots of `backup`: the daemon's, which keeps
    /// the data directory. Nil: the op fails (no data directory).
    public weak var backupSource: (any BackupSource)?
    /// Which writes the data directory's disk has room for (the daemon says;
    /// ``checkStorage(for:)`` refuses the others with `storage_full`).
    public var storageAdmission = StorageAdmission.everything
    /// Reads the data directory's room to write, for `info`'s `storage` (the
    /// daemon's storage writer knows it); nil without a data directory.
    public var storageStatus: (() -> StorageStatus)?
    /// Over etcd: where change ops go instead of being applied here (docs/CLUSTER.md); nil in local mode.
    @exclusivity(unchecked) public var replicator: ChangeReplicator?
    /// Over a replicator: whether the change requests a client sends in a row
    /// wait for ``queuePipelinedChanges(of:)`` (the daemon calls it after each
    /// read) and go as one proposal, with other clients' read in the same loop
    /// turn (``proposeQueuedPipelines()``); false: each is proposed at once.
    @exclusivity(unchecked) public var pipelinesChanges = false
    /// Over a replicator: the pipelines queued for the turn's end, and the changes with `await` in flight.
    let proposals = PendingProposals()

    public init(configuration: EngineConfiguration = EngineConfiguration()) {
        self.configuration = configuration
        self.history = ChangeHistory(limits: configuration.historyLimits)
        // One table of objects for both: a change finds its document and its
        // observers with one hash of the name.
        let objects = ObjectTable()
        store = Store(objects: objects)
        shared = SharedController(objects: objects)
        leaseTable = LeaseTable(objects: objects)
        resources = ResourceAccount(store: store, shared: shared, history: history, leases: leaseTable,
                                    configuration: configuration)
        shared.accessPolicy = configuration.accessPolicy
        shared.throttleSchedule.clock = configuration.throttleClock
        epochMember = Self.epochMember(epoch)
    }

    private static func epochMember(_ epoch: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append(literal: LineFragment.epochMember)
        JSONWriter.writeString(epoch, into: &bytes)
        return bytes
    }

    /// Continues from a saved state: its documents, its seq, its history.
    /// Call before the first client and the first change.
    public func restore(_ state: SavedState) {
        precondition(store.seq == 0 && store.objectCount == 0 && clientCount == 0, "restore a fresh engine only")
        store.restore(documents: state.documents, seq: state.seq, modSeqs: state.modSeqs)
        history.restore(state.history)
        epoch = state.epoch
        leaseTable.restore(state.leases)
    }

    // MARK: Clients

    /// A controller for a new client.
    public func makeClient() -> ClientController {
        defer { nextClientID += 1 }
        clientCount += 1
        return ClientController(id: nextClientID, shared: shared)
    }

    /// Ends a client: everything it observed is unobserved at once, and the
    /// values it owned are queued for deletion (``releaseDueValues(budget:)``
    /// makes them, in slices).
    public func closeClient(_ client: ClientController) {
        guard !client.isClosed else { return }
        client.close()
        clientCount -= 1
        leaseTable.ownerLeft(client.id)
    }

    // MARK: Requests

    /// Answers one decoded line from `client`: its events and reply go to the
    /// client's output. The daemon decodes with its own ``RequestDecoder``.
    public func handle(_ outcome: consuming RequestDecoder.Outcome, from client: ClientController) {
        switch consume outcome {
        case .request(var request):
            handle(&request, from: client)
        case .failure(let id, let error):
            requestCounts.invalid += 1
            if replicator != nil, client.holdsPipelinedWork { return park(.failure(id: id, error: error), of: client) }
            client.append(reply: ReplyEncoder.failure(id: id, error))
        }
    }

    /// Decodes and answers one line, with a decoder that keeps no key path
    /// between lines (tests and tools; the same path as the daemon's).
    public func handle(line: UnsafeRawBufferPointer, from client: ClientController) {
        handle(RequestDecoder.decode(line), from: client)
    }

    /// A complete error line, for the daemon to send to a client it refuses
    /// before any engine state exists for it (e.g. too many connections).
    public static func refusal(_ error: KVOEngineError) -> [UInt8] {
        ReplyEncoder.failure(id: nil, error)
    }

    /// Answers a line that was over the size limit.
    public func handleLineTooLarge(maxLineBytes: Int, from client: ClientController) {
        requestCounts.invalid += 1
        let error = KVOEngineError(.tooLarge, "line longer than \(maxLineBytes) bytes; the rest of it is discarded")
        if replicator != nil, client.holdsPipelinedWork { return park(.failure(id: nil, error: error), of: client) }
        client.append(reply: ReplyEncoder.failure(id: nil, error))
    }

    /// Handles `request`, free to take its parts.
    @inline(__always)
    func handle(_ request: inout Request, from client: ClientController) {
        requestCounts.count(request.operation)
        if let replicator, request.operation.spec.replicated || client.holdsPipelinedWork {
            return handlePipelined(request, from: client, through: replicator)
        }
        answer(&request, from: client)
    }

    /// Answers one request here and now (over etcd: one that is not a change).
    @inline(__always)
    func answer(_ request: inout Request, from client: ClientController) {
        do throws(KVOEngineError) {
            let modifiers = request.modifiers
            try authorize(request.operation, condition: modifiers?.condition, for: client)
            if storageAdmission != .everything { try checkStorage(for: request.operation) }
            var reply = ReplyEncoder()
            if let condition = modifiers?.condition {
                try check(condition, of: request.operation)
            }
            if let awaiting = modifiers?.awaiting {
                return try performAwaited(request, awaiting, for: client, reply: reply)
            }
            // Its reply waits for the snapshot, as an awaited change's for its observers.
            if case .backup(offset: nil) = request.operation { return try startBackup(replyingTo: request.id, for: client) }
            if configuration.accessPolicy == nil {
                // Moved out: a change's record takes the request's name, path
                // and value, where copies were retained and the request's
                // released. Only concealment (an access policy's) reads it again.
                try perform(request.operation.take(), lifetime: modifiers?.lifetime, for: client, reply: &reply)
            } else {
                try perform(request.operation, lifetime: modifiers?.lifetime, for: client, reply: &reply)
            }
            client.append(reply, id: request.id)
        } catch {
            client.append(reply: ReplyEncoder.failure(id: request.id, concealing(error, of: request.operation,
                                                                                for: client)))
        }
    }

    /// The dispatch table: one case per op (xenstored's `wire_funcs`).
    func perform(_ operation: consuming Operation, lifetime: ValueLifetime? = nil, for client: ClientController,
                 reply: inout ReplyEncoder) throws(KVOEngineError) {
        switch consume operation {
        case .set(let object, let keyPath, let value):
            // Each part moved on (`consume`): passed as bound, the value was
            // copied for the call and released after it.
            let lease = lease(for: lifetime, from: client)
            reply.seq(try set(consume object, consume keyPath, consume value, lease: lease))
        case .get(let object, let keyPath):
            // The seq the answer is as of, found or not: a client then knows
            // which changes it reflects (KVOClient's later `initial`).
            do throws(KVOEngineError) {
                reply.field(.value, try get(object, keyPath))
            } catch {
                var details = error.details
                details[.seq] = .number(JSONNumber(validatedLiteral: String(store.seq)))
                details[.modSeq] = 0
                if replicator?.isStale == true { details[.stale] = true }
                throw KVOEngineError(error.code, error.message, details: details)
            }
            // A computed value changes with its array.
            reply.field(.modSeq, integer: store.modSeq(object, at: keyPath?.readPath ?? []))
            if let lease = leaseTable.lease(of: object, at: keyPath?.description ?? "") {
                if lease.ephemeral { reply.field(.ephemeral, .bool(true)) }
                if let deadline = lease.deadline {
                    let left = (deadline - configuration.wallClock()).rounded(.up)
                    reply.field(.expiresIn, integer: max(0, Int(left)))
                }
            }
            reply.seq(store.seq)
            if replicator?.isStale == true { reply.field(.stale, .bool(true)) }
        case .delete(let object, let keyPath):
            reply.seq(delete(object, keyPath))
        case .insert(let object, let keyPath, let index, let values):
            reply.seq(try commit(insertion(object, keyPath, at: index, values)))
        case .remove(let object, let keyPath, let indexes):
            reply.seq(try commit(removal(object, keyPath, at: indexes)))
        case .replace(let object, let keyPath, let indexes, let values):
            reply.seq(try commit(replacement(object, keyPath, at: indexes, with: values)))
        case .add(let object, let keyPath, let amount):
            let (seq, sum) = try add(object, keyPath, by: amount, lease: lease(for: lifetime, from: client))
            reply.added(sum, seq: seq)
        case .observe(let scope, let keyPaths, let options, let context, let since, let policy, let filter, let compact,
                      let update):
            let observed = try observe(scope, keyPaths, options, context, since: since, policy: policy, filter: filter,
                                       compact: compact, update: update, for: client)
            reply.seq(store.seq, followedBy: epochMember)
            if compact { writeObservationNumbers(observed, into: &reply) }
        case .unobserve(let scope, let keyPaths):
            if let keyPaths {
                for keyPath in keyPaths { client.unobserve(scope, keyPath: keyPath) }
            } else {
                client.unobserve(scope)
            }
        case .batch(let operations):
            let (seqs, sums) = try batch(operations, for: client)
            reply.seq(store.seq)
            reply.field(.seqs, .array(seqs.map { $0.map { .number(JSONNumber(validatedLiteral: String($0))) } ?? .null }))
            reply.sums(sums)
        case .list(let prefix, let after, let limit):
            let (names, more) = list(prefix: prefix, after: after, limit: limit, for: client)
            reply.field(.objects, .array(names.map(JSONValue.string)))
            reply.field(.more, .bool(more))
            reply.seq(store.seq)
            if replicator?.isStale == true { reply.field(.stale, .bool(true)) }
        case .unobserveAll:
            client.unobserveAll()
        case .ping:
            break
        case .info:
            writeInfo(for: client, into: &reply)
        case .observations(let after, let limit):
            writeObservationsPage(after: after, limit: limit, for: client, into: &reply)
        case .metrics:
            guard let metricsText else { throw KVOEngineError(.badRequest, "this kvod keeps no metrics") }
            reply.field(.text, .string(metricsText()))
        case .ack(let seq):
            try acknowledge(seq, from: client)
        case .backup(let offset):
            try writeBackupChunk(at: offset ?? 0, for: client, into: &reply)
        }
    }
}

// MARK: - Reading and observing

extension Engine {
    func get(_ object: String, _ keyPath: ObservedPath?) throws(KVOEngineError) -> JSONValue {
        guard let value = store.value(object, at: keyPath?.components ?? []) else {
            let place = keyPath.map { "\(object) has no value at \($0)" } ?? "no object \(object)"
            throw KVOEngineError(.notFound, place)
        }
        return value
    }

    /// Observes `keyPaths` in `scope` (for a prefix, of every object under it:
    /// as many observations, each delivering for every such object what an
    /// observation of that object alone would, and only for objects the
    /// client may read). With `since`, the changes after it that each new
    /// observation matches are delivered first (in place of `initial`), so
    /// the client continues without a gap or a duplicate.
    /// Returns the client's observation of each key path, in order (a new
    /// one, or the one it already had there), for `compact`'s reply.
    @discardableResult
    func observe(_ scope: ObservationScope, _ keyPaths: [ObservedPath], _ options: ObservationOptions,
                 _ context: JSONValue?, since: ResumePoint?, policy: ObservationPolicy = .default,
                 filter: ObservationFilter = .none, compact: Bool = false, update: Bool = false,
                 for client: ClientController) throws(KVOEngineError) -> [ObservationInfo] {
        // No lookup of the observations already there (a walk and a set of
        // the new ones) unless all of them being new would be refused:
        // observing a key path again is not.
        let added = resources.admitsObservations(keyPaths.count, context: context, for: client)
            ? keyPaths.count
            : keyPaths.count == 1
                ? (client.isObserving(scope, keyPath: keyPaths[0]) ? 0 : 1)
                : Set(keyPaths.filter { !client.isObserving(scope, keyPath: $0) }).count
        try resources.checkObservationLimits(adding: added, context: context, for: client)
        if let since { try checkResumable(since) }
        // Kept only for what reads them (replay, initial events): the usual
        // observe allocates no array.
        let keepsMade = since != nil || options.contains(.initial)
        var made: [ObservationInfo] = []
        var observed: [ObservationInfo] = []
        // The scope's root is looked up once, not once per key path (and not
        // made for a closed client, which would leave it empty).
        guard !client.isClosed else { return [] }
        let root = shared.rootCreating(scope)
        for keyPath in keyPaths {
            let node = shared.nodeCreating(keyPath, below: root)
            if let info = client.observe(at: node, options: options, context: context, policy: policy, filter: filter,
                                         compact: compact) {
                if keepsMade { made.append(info) }
                if compact { observed.append(info) }
            } else if compact || update, let existing = client.observation(at: node) {
                // The first registration stays, its form too: the reply names it. With `update`
                // it takes the new options, and with `initial` gets its initial event again.
                if update {
                    client.replaceOptions(of: existing, with: options)
                    if options.contains(.initial) { made.append(existing) }
                }
                if compact { observed.append(existing) }
            }
        }
        guard !made.isEmpty else { return observed }
        if let since {
            // The missed changes, each as it was sent live, in the order it was.
            let includes: (String) -> Bool = switch scope {
            case .object(let object): { $0 == object }
            case .prefix(let prefix): { CanonicalName.hasPrefix($0, prefix) && self.mayRead($0, client) }
            }
            var replay = Replay(observations: made)
            replay.run(over: history.changes(after: since.seq), including: includes,
                       documentNow: { self.store.value($0, at: [String]()) }, to: client)
        } else if options.contains(.initial) {
            // KVO's initial notification: the current value of each key path
            // (of every object there now, in `list` order, for a prefix), before the reply.
            client.send(InitialEvents(scope: scope, infos: made, seq: store.seq))
        }
        return observed
    }

    /// `"o"` in a compact `observe`'s reply: the number of the observation
    /// of its one key path, or an array of them in the order of `keyPaths`.
    private func writeObservationNumbers(_ observed: [ObservationInfo], into reply: inout ReplyEncoder) {
        if observed.count == 1 {
            reply.field(.observation, integer: observed[0].number)
            return
        }
        reply.field(.observation) { bytes in
            bytes.append(UInt8(ascii: "["))
            for (position, info) in observed.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(decimal: info.number)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// Up to `limit` names of objects under `prefix` after `after`, that the
    /// client may read, and whether more follow.
    func list(prefix: String, after: String?, limit: Int, for client: ClientController) -> ([String], Bool) {
        var names: [String] = []
        var more = false
        store.objects.names.forEach(prefix: prefix, after: after) { name in
            guard mayRead(name, client) else { return true }
            guard names.count < limit else {
                more = true
                return false
            }
            names.append(name)
            return true
        }
        return (names, more)
    }

    /// The oldest seq held in the history, or the next seq when none is: a
    /// `since` from the seq before it replays every change after. Over etcd,
    /// whose seqs skip, the revision after the one the history is complete
    /// from (the oldest change held may be later; docs/CLUSTER.md).
    public var oldestSeqHeld: UInt64 {
        if let forgotten = history.forgottenSeq { return forgotten + 1 }
        return history.oldestSeq ?? store.seq + 1
    }

    /// Refuses a resume point of another epoch or older than the history
    /// (`compacted`, with the oldest seq still held), or in the future
    /// (`bad_request`; `unavailable` over etcd while this kvod is stale).
    private func checkResumable(_ point: ResumePoint) throws(KVOEngineError) {
        let oldest = oldestSeqHeld
        let details = JSONObject([KVOProtocol.Field.oldestSeq: .number(JSONNumber(validatedLiteral: String(oldest))),
                                  .epoch: .string(epoch)])
        if let other = point.epoch, other != epoch {
            throw KVOEngineError(
                .compacted, "seq \(point.seq) is of epoch \(other), not of this kvod's history (epoch \(epoch)); "
                    + "get the current value", details: details)
        }
        guard point.seq <= store.seq else {
            // Over etcd, a kvod still catching up has not applied what another kvod told the client:
            // the same since works here later, so it is to be retried, not a bad request.
            if replicator?.isStale == true {
                throw KVOEngineError(
                    .unavailable, "since \(point.seq) is after the last change this kvod applied (\(store.seq)): "
                        + "it is catching up with etcd; try again once it follows (info's cluster)")
            }
            throw .badRequest("since \(point.seq) is after the current seq \(store.seq)")
        }
        guard point.seq + 1 >= oldest else {
            throw KVOEngineError(
                .compacted, "changes after \(point.seq) are no longer held (oldest: \(oldest)); get the current value",
                details: details)
        }
    }

    private func writeInfo(for client: ClientController, into reply: inout ReplyEncoder) {
        let uptime = ContinuousClock.now - startedAt
        reply.field(.version, .string(configuration.version))
        reply.field(.commit, .string(configuration.commit))
        reply.field(.uptime, integer: uptime.components.seconds)
        reply.field(.connections, integer: clientCount)
        reply.field(.observations, integer: shared.observationCount - shared.leavingCount)
        reply.field(.objects, integer: store.objectCount)
        reply.seq(store.seq)
        reply.field(.oldestSeq, integer: oldestSeqHeld)
        reply.field(.epoch, .string(epoch))
        if let replicator { reply.field(.cluster, .object(replicator.info)) }
        writeResourceInfo(tellsSizes: readsEverything(client), into: &reply)
    }
}
