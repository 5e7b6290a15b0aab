import KVOCluster
// @testable: EtcdWatchEvent's memberwise init, internal to KVOEtcd.
@testable import KVOEtcd

/// An etcd in memory, as the replica sees one through ``ClusterBackend``: one
/// key space with revisions, compare-and-write `Txn`s, watches from a
/// revision, leases. Answers wait in a queue until the test's loop drains it
/// (never from within the call). Faults on demand: a lost connection, a
/// compaction, a `Txn` whose answer is lost after it was applied, watches
/// that stall while the store moves on.
final class MemoryEtcd: ClusterBackend {
    let endpoints = ["http://member-a:2379", "http://member-b:2379"]
    private(set) var currentEndpoint = "http://member-a:2379"
    static let clusterID: UInt64 = 0xC1
    static let raftTerm: UInt64 = 2

    /// The store: each live key, and every event since the start, in order.
    private(set) var keys: [[UInt8]: EtcdKeyValue] = [:]
    private(set) var history: [EtcdWatchEvent] = []
    private(set) var revision: Int64 = 1
    /// Revisions up to this one are compacted: a watch from one of them is refused.
    private(set) var compactRevision: Int64 = 0
    private var nextLease: Int64 = 100
    private var leases: [Int64: Set<[UInt8]>] = [:]
    /// `Txn`s that took effect, of the replica's (not the test's own writes).
    private(set) var appliedTxns = 0

    /// Answers waiting for the loop.
    private var answers: [() -> Void] = []
    private var watches: [MemoryWatch] = []

    // MARK: Faults

    /// While false every request fails (nothing sent) and no watch can be had.
    private(set) var isReachable = true
    /// How many `Txn`s to come are applied with their answer lost.
    var answersToLose = 0

    /// The connection is lost: every watch ends, and requests fail until ``reconnect()``.
    func disconnect() {
        isReachable = false
        for watch in watches where !watch.isCancelled && !watch.hasEnded {
            let endpoint = watch.endpoint
            deliver(to: watch, .ended(.unreachable(endpoint: endpoint, detail: "connection reset", mayHaveApplied: true)))
            watch.hasEnded = true
        }
    }

    func reconnect() { isReachable = true }

    /// Discards the history up to the newest revision.
    func compact() { compactRevision = revision }

    /// While true, the watches' new events wait (a watch slower than the `Txn`s' answers).
    private(set) var holdsWatchEvents = false
    private var held: [(MemoryWatch, EtcdWatchUpdate)] = []

    func holdWatchEvents() { holdsWatchEvents = true }

    /// The events held go to their watches, and later ones as they come.
    func releaseWatchEvents() {
        holdsWatchEvents = false
        for (watch, update) in held { deliver(to: watch, update) }
        held = []
    }

    /// The watches in place deliver nothing more (a hung member), while the store goes on.
    func stallWatches() {
        for watch in watches { watch.isStalled = true }
    }

    // MARK: The test's own writes (another kvod, etcdctl)

    /// Puts `value` at `key` in a revision of its own.
    func put(_ key: String, _ value: String) {
        _ = apply([.put(EtcdPutRequest(key: Array(key.utf8), value: Array(value.utf8)))])
    }

    func delete(_ key: String) {
        _ = apply([.delete(EtcdDeleteRequest(.key(key)))])
    }

    func value(_ key: String) -> String? { keys[Array(key.utf8)]?.valueText }

    /// The leases granted and not ended yet.
    var liveLeases: Set<Int64> { Set(leases.keys) }

    /// Ends `lease` as its ttl passing would: its keys deleted in one revision.
    func expire(_ lease: Int64) {
        let leased = leases.removeValue(forKey: lease) ?? []
        guard !leased.isEmpty else { return }
        _ = apply(leased.sorted { $0.lexicographicallyPrecedes($1) }.map { .delete(EtcdDeleteRequest(EtcdKeyRange(key: $0))) })
    }

    var hasAnswers: Bool { !answers.isEmpty }

    /// Runs the answers due, in order, until none is.
    func drain() {
        while !answers.isEmpty {
            let answer = answers.removeFirst()
            answer()
        }
    }

    // MARK: ClusterBackend

    func range(_ request: EtcdRangeRequest, _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void) {
        answer(done) { self.read(request) }
    }

    func probe(_ request: EtcdRangeRequest, at endpoint: String, timeoutMilliseconds: Int,
               _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void) {
        answer(done) { self.read(request) }
    }

    @discardableResult
    func txn(_ request: EtcdTxnRequest, idempotent: Bool,
             _ done: @escaping (Result<EtcdTxnResponse, EtcdError>) -> Void) -> MemoryRequest {
        let handle = MemoryRequest(endpoint: currentEndpoint, done: done)
        guard isReachable else {
            answers.append { handle.finish(.failure(self.unreachable(mayHaveApplied: false))) }
            return handle
        }
        let succeeded = request.compare.allSatisfy(holds)
        let responses = apply(succeeded ? request.success : request.failure)
        if succeeded && !request.success.isEmpty { appliedTxns += 1 }
        let response = EtcdTxnResponse(header: header, succeeded: succeeded, responses: responses)
        if answersToLose > 0 {
            answersToLose -= 1
            answers.append { handle.finish(.failure(self.unreachable(mayHaveApplied: true))) }
        } else {
            answers.append { handle.finish(.success(response)) }
        }
        return handle
    }

    func status(of endpoint: String?, timeoutMilliseconds: Int?, _ done: @escaping (Result<EtcdStatus, EtcdError>) -> Void) {
        answer(done) { EtcdStatus(header: self.header, leader: 1, raftTerm: Self.raftTerm) }
    }

    func avoid(_ endpoint: String) {
        guard endpoint == currentEndpoint, let index = endpoints.firstIndex(of: endpoint) else { return }
        currentEndpoint = endpoints[(index + 1) % endpoints.count]
    }

    func watch(_ request: EtcdWatchRequest, _ handler: @escaping (EtcdWatchUpdate) -> Void) -> MemoryWatch {
        let watch = MemoryWatch(request: request, endpoint: currentEndpoint, handler: handler)
        watches.removeAll { $0.isCancelled || $0.hasEnded }
        watches.append(watch)
        guard isReachable else {
            deliver(to: watch, .ended(unreachable(mayHaveApplied: false)))
            watch.hasEnded = true
            return watch
        }
        if request.startRevision != 0 && request.startRevision <= compactRevision {
            deliver(to: watch, .compacted(compactRevision: compactRevision))
            watch.hasEnded = true
            return watch
        }
        deliver(to: watch, .created(header))
        // From revision 0: from now on, nothing past.
        let past = request.startRevision == 0 ? [] : history.filter {
            $0.kv.modRevision >= request.startRevision && Self.contains(request.range, $0.kv.key)
        }
        if !past.isEmpty { deliver(to: watch, .events(header, past)) }
        return watch
    }

    func grantLease(ttl: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void) {
        answer(done) {
            self.nextLease += 1
            self.leases[self.nextLease] = []
            return EtcdLease(header: self.header, id: self.nextLease, ttl: ttl)
        }
    }

    func keepAlive(lease: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void) {
        answer(done) { EtcdLease(header: self.header, id: lease, ttl: self.leases[lease] == nil ? 0 : 10) }
    }

    func revokeLease(_ lease: Int64, _ done: @escaping (Result<EtcdResponseHeader, EtcdError>) -> Void) {
        answer(done) {
            self.expire(lease)
            return self.header
        }
    }

    func revokeWhileClosing(_ leases: Set<Int64>) {
        for lease in leases { revokeLease(lease) { _ in } }
    }

    func close() {
        for watch in watches { watch.cancel() }
    }

    // MARK: The store

    private var header: EtcdResponseHeader {
        EtcdResponseHeader(clusterID: Self.clusterID, memberID: 1, revision: revision, raftTerm: Self.raftTerm)
    }

    private func unreachable(mayHaveApplied: Bool) -> EtcdError {
        .unreachable(endpoint: currentEndpoint, detail: "connection refused", mayHaveApplied: mayHaveApplied)
    }

    /// Queues `make`'s answer, made when the loop drains it (a failure while unreachable).
    private func answer<T>(_ done: @escaping (Result<T, EtcdError>) -> Void, _ make: @escaping () -> T) {
        let reachable = isReachable
        answers.append {
            done(reachable ? .success(make()) : .failure(self.unreachable(mayHaveApplied: false)))
        }
    }

    static func contains(_ range: EtcdKeyRange, _ key: [UInt8]) -> Bool {
        if range.rangeEnd.isEmpty { return key == range.key }
        if key.lexicographicallyPrecedes(range.key) { return false }
        return range.rangeEnd == [0] || key.lexicographicallyPrecedes(range.rangeEnd)
    }

    private func read(_ request: EtcdRangeRequest) -> EtcdRangeResponse {
        var kvs = keys.values.filter { Self.contains(request.range, $0.key) }
        if request.newestFirst {
            kvs.sort { $0.modRevision > $1.modRevision }
        } else {
            kvs.sort { $0.key.lexicographicallyPrecedes($1.key) }
        }
        let count = Int64(kvs.count)
        if request.limit > 0 { kvs = Array(kvs.prefix(Int(request.limit))) }
        if request.keysOnly { kvs = kvs.map { var kv = $0; kv.value = []; return kv } }
        return EtcdRangeResponse(header: header, kvs: kvs, more: Int64(kvs.count) < count, count: count)
    }

    private func holds(_ compare: EtcdCompare) -> Bool {
        let kv = keys[compare.range.key]
        let order: Int64
        switch compare.target {
        case .version(let version): order = (kv?.version ?? 0) - version
        case .modRevision(let revision): order = (kv?.modRevision ?? 0) - revision
        case .value(let value): order = (kv?.value ?? []) == value ? 0 : 1
        }
        return order == 0
    }

    /// Applies `operations` in one revision (none when they write nothing), tells the watches.
    private func apply(_ operations: [EtcdRequestOp]) -> [EtcdResponseOp] {
        let next = revision + 1
        var events: [EtcdWatchEvent] = []
        var responses: [EtcdResponseOp] = []
        for operation in operations {
            switch operation {
            case .range(let request):
                responses.append(.range(read(request)))
            case .put(let put):
                let previous = keys[put.key]
                if let lease = previous?.lease, lease != 0 { leases[lease]?.remove(put.key) }
                let kv = EtcdKeyValue(key: put.key, value: put.value, createRevision: previous?.createRevision ?? next,
                                      modRevision: next, version: (previous?.version ?? 0) + 1, lease: put.lease)
                keys[put.key] = kv
                if put.lease != 0 { leases[put.lease, default: []].insert(put.key) }
                events.append(EtcdWatchEvent(kind: .put, kv: kv))
                responses.append(.put(EtcdPutResponse(header: header, prevKV: put.prevKV ? previous : nil)))
            case .delete(let delete):
                let gone = keys.values.filter { Self.contains(delete.range, $0.key) }
                    .sorted { $0.key.lexicographicallyPrecedes($1.key) }
                for kv in gone {
                    keys[kv.key] = nil
                    if kv.lease != 0 { leases[kv.lease]?.remove(kv.key) }
                    events.append(EtcdWatchEvent(kind: .delete, kv: EtcdKeyValue(key: kv.key, value: [], modRevision: next)))
                }
                responses.append(.delete(EtcdDeleteResponse(header: header, deleted: Int64(gone.count),
                                                            prevKVs: delete.prevKV ? gone : [])))
            }
        }
        guard !events.isEmpty else { return responses }
        revision = next
        history += events
        for watch in watches where !watch.isCancelled && !watch.hasEnded && !watch.isStalled {
            let seen = events.filter { Self.contains(watch.request.range, $0.kv.key) }
            guard !seen.isEmpty else { continue }
            if holdsWatchEvents {
                held.append((watch, .events(header, seen)))
            } else {
                deliver(to: watch, .events(header, seen))
            }
        }
        // Answers carry the revision they made.
        return responses.map { response in
            switch response {
            case .put(var put): put.header = header; return .put(put)
            case .delete(var delete): delete.header = header; return .delete(delete)
            case .range: return response
            }
        }
    }

    private func deliver(to watch: MemoryWatch, _ update: EtcdWatchUpdate) {
        answers.append { [weak watch] in
            guard let watch, !watch.isCancelled else { return }
            watch.handler(update)
        }
    }
}

/// A `Txn` in flight.
final class MemoryRequest: ClusterRequest {
    let endpoint: String
    private(set) var isFinished = false
    private var done: ((Result<EtcdTxnResponse, EtcdError>) -> Void)?

    init(endpoint: String, done: @escaping (Result<EtcdTxnResponse, EtcdError>) -> Void) {
        self.endpoint = endpoint
        self.done = done
    }

    func finish(_ result: Result<EtcdTxnResponse, EtcdError>) {
        guard !isFinished, let done else { return }
        isFinished = true
        self.done = nil
        done(result)
    }

    func abandon(because reason: String) {
        finish(.failure(.unreachable(endpoint: endpoint, detail: "abandoned: \(reason)", mayHaveApplied: true)))
    }
}

/// A watch in place.
final class MemoryWatch: ClusterWatch {
    let request: EtcdWatchRequest
    let endpoint: String
    let handler: (EtcdWatchUpdate) -> Void
    private(set) var isPaused = false
    /// Cancelled by the replica: its handler hears nothing more.
    private(set) var isCancelled = false
    /// Ended by etcd (its last update told), or stalled: it delivers nothing more.
    var hasEnded = false
    var isStalled = false

    init(request: EtcdWatchRequest, endpoint: String, handler: @escaping (EtcdWatchUpdate) -> Void) {
        self.request = request
        self.endpoint = endpoint
        self.handler = handler
    }

    func pauseReceiving() { isPaused = true }
    func resumeReceiving() { isPaused = false }
    func cancel() { isCancelled = true }
}
