import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues

/// A client of the history run, on a thread of its own, on one kvod: until
/// the log says stop, it sets, gets, compares-and-sets and batches the key
/// paths of a few objects with values unique in the run (`r<round>c<n>-<k>`),
/// one request at a time or (`.pipelining`) a few sets written at once, or
/// (`.reading`) only gets, which go on while its kvod is cut off; and records
/// each request with its call and return times (``HistoryLog``).
///
/// A request that gets no answer within ``answerTimeout`` (or whose connection
/// breaks) is recorded as of unknown outcome and its connection abandoned: a
/// later answer on it would be taken for the next request's. A kvod that is
/// down (killed, not yet restarted) is waited for. Conditions come from what
/// this client last saw through its own kvod (a read, or its own write's
/// answer): a kvod's replica only moves forward, so a condition it finds
/// false, it finds false at a moment between call and answer.
final class HistoryClient: @unchecked Sendable {
    // @unchecked: everything but `log` and `done` is touched by the client's thread only.
    static let objects = ["h0", "h1", "h2"]
    static let paths = ["a", "b"]
    /// Longer than kvod's own bound on a change (5 s per sending, 3 resends 250 ms apart): a request
    /// unanswered past it is one kvod lost, not one it is still settling.
    static let answerTimeout = 40.0

    let number: Int
    let kvod: Int
    let round: Int
    let socketPath: String
    let role: Role
    private let log: HistoryLog
    private var random: SplitMix64
    private var written = 0
    private var connection: LineClient?
    /// What this client last saw of each key path through its kvod: value and modSeq.
    private var seen: [String: (value: String, modSeq: Int?)] = [:]
    let done = DispatchSemaphore(value: 0)

    /// What a client's requests are.
    enum Role: CaseIterable {
        /// One request at a time, of every kind.
        case mixed
        /// As `mixed`, and at times two or three sets written at once.
        case pipelining
        /// Gets only, of a key path or a whole document.
        case reading
    }

    init(number: Int, kvod: Int, round: Int, socketPath: String, role: Role, seed: UInt64, log: HistoryLog) {
        self.number = number
        self.kvod = kvod
        self.round = round
        self.socketPath = socketPath
        self.role = role
        self.log = log
        random = SplitMix64(seed: seed &+ UInt64(number) &* 0x9E37_79B9)
    }

    func start() {
        let thread = Thread { [self] in
            while !log.isStopping {
                guard let client = connected() else { continue }
                makeOneRequest(client)
            }
            connection = nil
            done.signal()
        }
        thread.name = "ClusterHistory.client\(number)"
        thread.start()
    }

    /// The connection, made again if it broke; nil when the kvod is down and the run stops meanwhile.
    private func connected() -> LineClient? {
        if let connection { return connection }
        do {
            try waitUntil("kvod \(kvod) accepts connections again", timeout: 120, recheckEvery: 0.05) {
                connection = try? LineClient(path: socketPath)
                return connection != nil || log.isStopping
            }
        } catch {
            log.fail("client \(number): \(error)")
            log.isStopping = true
        }
        return connection
    }

    private func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }

    private func nextValue() -> String {
        written += 1
        return "r\(round)c\(number)-\(written)"
    }

    private func makeOneRequest(_ client: LineClient) {
        let object = pick(Self.objects), path = pick(Self.paths)
        if role == .reading {
            let writes = log.writeCount
            if random.next() % 3 == 0 { getAll(object, client) } else { get(object, path, client) }
            return log.waitForWrites(after: writes, timeout: 1)
        }
        switch random.next() % 100 {
        case 0..<22: write(object, [RecordedOperation.Write(path: path, value: nextValue(), condition: nil)], client)
        case 22..<38: write(object, [RecordedOperation.Write(path: path, value: nextValue(), condition: condition(object, path))], client)
        case 38..<58: get(object, path, client)
        case 58..<68: getAll(object, client)
        case 68..<80:
            let conditioned = pick(Self.paths)
            let writes = Self.paths.map { path in
                RecordedOperation.Write(path: path, value: nextValue(),
                                        condition: path == conditioned && random.next() % 2 == 0 ? condition(object, path) : nil)
            }
            write(object, writes, client, isBatch: true)
        default:
            if role == .pipelining { pipeline(client) } else { get(object, path, client) }
        }
    }

    /// `ifModSeq` or `ifValue` from what this client last saw there; nil when it saw nothing yet.
    private func condition(_ object: String, _ path: String) -> RecordedOperation.Condition? {
        guard let last = seen["\(object).\(path)"] else { return nil }
        if let modSeq = last.modSeq, random.next() % 2 == 0 { return .modSeq(modSeq) }
        return .value(last.value)
    }

    // MARK: Requests

    private static func line(_ object: String, _ write: RecordedOperation.Write) -> JSONObject {
        var request: JSONObject = ["op": "set", "object": .string(object), "keyPath": .string(write.path),
                                   "value": .string(write.value)]
        switch write.condition {
        case .modSeq(let modSeq)?: request["ifModSeq"] = .number(JSONNumber(modSeq))
        case .value(let value)?: request["ifValue"] = .string(value)
        case nil: break
        }
        return request
    }

    private func write(_ object: String, _ writes: [RecordedOperation.Write], _ client: LineClient, isBatch: Bool = false) {
        let request: JSONValue = isBatch
            ? .object(["op": "batch", "ops": .array(writes.map { .object(Self.line(object, $0)) })])
            : .object(Self.line(object, writes[0]))
        let (call, answers) = exchange([request], client)
        record(.write(object: object, writes: writes, isBatch: isBatch), call, answers[0])
    }

    /// Two or three sets written at once: kvod may commit them in one `Txn`, each with its own answer.
    private func pipeline(_ client: LineClient) {
        let writes = (0..<(2 + Int(random.next() % 2))).map { _ in
            (pick(Self.objects), RecordedOperation.Write(path: pick(Self.paths), value: nextValue(), condition: nil))
        }
        let (call, answers) = exchange(writes.map { .object(Self.line($0.0, $0.1)) }, client)
        for (write, answer) in zip(writes, answers) {
            record(.write(object: write.0, writes: [write.1], isBatch: false), call, answer)
        }
    }

    private func get(_ object: String, _ path: String, _ client: LineClient) {
        let (call, answers) = exchange([.object(["op": "get", "object": .string(object), "keyPath": .string(path)])], client)
        record(.get(object: object, path: path), call, answers[0])
    }

    private func getAll(_ object: String, _ client: LineClient) {
        let (call, answers) = exchange([.object(["op": "get", "object": .string(object)])], client)
        record(.getAll(object: object), call, answers[0])
    }

    /// Writes `requests` at once and reads an answer for each, with its time;
    /// nil for each from the first that did not come (the connection is then dropped).
    private func exchange(_ requests: [JSONValue], _ client: LineClient) -> (call: Double, [(JSONValue, Double)?]) {
        let bytes = Array(requests.map { String(decoding: $0.jsonBytes, as: UTF8.self) + "\n" }.joined().utf8)
        let call = MonotonicClock.now()
        var answers: [(JSONValue, Double)?] = []
        do {
            try client.write(bytes)
            for _ in requests { answers.append((try client.readJSON(timeout: Self.answerTimeout), MonotonicClock.now())) }
        } catch {
            connection = nil
        }
        return (call, answers + Array(repeating: nil, count: requests.count - answers.count))
    }

    private func record(_ request: RecordedOperation.Request, _ call: Double, _ answer: (JSONValue, Double)?) {
        guard let (reply, returned) = answer else {
            // A read without an answer observed nothing: it is left out.
            if case .write = request {
                log.append(RecordedOperation(client: number, kvod: kvod, request: request, call: call, returned: nil,
                                             outcome: .unknown("no answer")))
            }
            return
        }
        guard let outcome = outcome(of: request, reply) else { return }
        if case .unknown = outcome {
            log.append(RecordedOperation(client: number, kvod: kvod, request: request, call: call, returned: nil, outcome: outcome))
        } else {
            log.append(RecordedOperation(client: number, kvod: kvod, request: request, call: call, returned: returned,
                                         outcome: outcome))
        }
        remember(request, outcome)
        if outcome.isRefusal || outcome.isStale { waitUntilFollowing() }
    }

    /// After a refusal or a stale read: until the kvod follows etcd again, or
    /// a second passed (its reads while stale are worth making too, but not
    /// by the thousand).
    private func waitUntilFollowing() {
        try? waitUntil("kvod \(kvod) follows etcd", timeout: 1, recheckEvery: 0.05) {
            log.isStopping || ClusterHistoryRig.follows(socketPath)
        }
    }

    private func outcome(of request: RecordedOperation.Request, _ reply: JSONValue) -> RecordedOperation.Outcome? {
        if reply["ok"] == true, let seq = reply["seq"]?.intValue {
            let stale = reply["stale"] == true
            switch request {
            case .write: return .applied(seq: seq)
            case .get: return .value(reply["value"]?.stringValue, modSeq: reply["modSeq"]?.intValue, seq: seq, stale: stale)
            case .getAll:
                guard case .object(let members)? = reply["value"] else { break }
                var values: [String: String] = [:]
                for (path, value) in members { values[path] = value.stringValue }
                return .values(values, seq: seq, stale: stale)
            }
        }
        switch (request, reply["error"]?["code"]?.stringValue) {
        case (.write, "precondition_failed"): return .conditionFailed
        case (.write, "unavailable"):
            let message = reply["error"]?["message"]?.stringValue ?? ""
            return message.hasSuffix("nothing changed") ? .notApplied : .unknown(message)
        default:
            log.fail("client \(number) on kvod \(kvod): \(request) was answered \(reply)")
            return nil
        }
    }

    private func remember(_ request: RecordedOperation.Request, _ outcome: RecordedOperation.Outcome) {
        switch (request, outcome) {
        case (.write(let object, let writes, _), .applied(let seq)):
            for write in writes { seen["\(object).\(write.path)"] = (write.value, seq) }
        case (.get(let object, let path), .value(let value?, let modSeq, _, _)):
            seen["\(object).\(path)"] = (value, modSeq)
        case (.getAll(let object), .values(let values, _, _)):
            for (path, value) in values where seen["\(object).\(path)"]?.value != value {
                seen["\(object).\(path)"] = (value, nil)
            }
        default: break
        }
    }
}
