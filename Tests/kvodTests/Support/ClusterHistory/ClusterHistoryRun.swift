import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues

/// The history run of issue 35 item 7, in rounds over one ``ClusterHistoryRig``.
/// A round: nine ``HistoryClient``s (three per kvod: mixed, pipelining, reading) run
/// while ``ClusterFaults`` injects its faults; then the clients stop, a marker
/// is written, every observer hears it, and each kvod's final reads join the
/// round's history. The round is then checked on its own: each object's
/// history for linearizability (``RegisterHistoryCheck``), each client's
/// session (``SessionCheck``), every observer's stream (``ObserverStreamCheck``).
/// A round starts from the state the last one's final reads saw, so a long run
/// checks round by round in bounded memory.
final class ClusterHistoryRun: @unchecked Sendable {
    // @unchecked: only the test that owns it touches it, from one task at a time.
    let rig: ClusterHistoryRig
    let seed: UInt64
    /// Writes the clients make during each fault and between faults.
    let operationsPerPhase: Int
    private var observers: [StreamObserver] = []
    private var initial: RegisterHistoryCheck.Initial = [:]
    /// The seq of the last round's marker (at first, of the setup's last write).
    private var lastMarker = 0
    private(set) var summary = ClusterHistorySummary()

    init(rig: ClusterHistoryRig, seed: UInt64, operationsPerPhase: Int) {
        self.rig = rig
        self.seed = seed
        self.operationsPerPhase = operationsPerPhase
    }

    /// Writes each object's first values through kvod 0, waits until every kvod has them, and starts the observers.
    func setUp() throws {
        let client = try LineClient(path: rig.sockets[0])
        for object in HistoryClient.objects {
            let document = JSONValue.object(JSONObject(uniqueKeysWithValues: HistoryClient.paths.map {
                ($0, JSONValue.string("init-\(object)-\($0)"))
            }))
            let request: JSONValue = .object(["op": "set", "object": .string(object), "value": document])
            lastMarker = try Self.change(String(decoding: request.jsonBytes, as: UTF8.self), through: client)
        }
        initial = try finalReads(upTo: lastMarker, log: HistoryLog(), round: 0)
        observers = try rig.sockets.enumerated().map { try StreamObserver(kvod: $0.offset, socketPath: $0.element) }
        let starts = observers.map(\.startSeq)
        guard Set(starts) == [lastMarker] else { throw TestFailure("the observers start at seqs \(starts), not \(lastMarker)") }
    }

    func finish() {
        for observer in observers { observer.stop() }
    }

    /// A change sent until it is applied (kvod answers `unavailable` while it cannot reach etcd); its seq.
    private static func change(_ line: String, through client: LineClient) throws -> Int {
        var seq: Int?
        try waitUntil("\(line) is applied", timeout: 120, recheckEvery: 0.05) {
            let reply = try client.request(line, timeout: 60).reply
            guard reply["error"]?["code"] != "unavailable" else { return false }
            guard reply["ok"] == true, let applied = reply["seq"]?.intValue else { throw TestFailure("\(line): \(reply)") }
            seq = applied
            return true
        }
        return seq!
    }

    func round(_ number: Int) async throws {
        let log = HistoryLog()
        let start = MonotonicClock.now()
        var clients: [HistoryClient] = []
        for (kvod, socket) in rig.sockets.enumerated() {
            for role in HistoryClient.Role.allCases {
                clients.append(HistoryClient(number: clients.count, kvod: kvod, round: number, socketPath: socket,
                                             role: role, seed: seed &+ UInt64(number) &* 1_000_003, log: log))
            }
        }
        for client in clients { client.start() }
        let faults = ClusterFaults(rig: rig, log: log, operations: operationsPerPhase)
        do {
            try await faults.inject(round: number)
            try await faults.letClientsWork(operationsPerPhase * 2)
        } catch {
            try Self.stop(clients, log)
            throw error
        }
        try Self.stop(clients, log)
        let marker = "marker-\(number)"
        let (markerSeq, next) = try close(round: number, marker: marker, log: log)
        let records = log.take()
        let streams = observers.map { $0.take(through: markerSeq) }
        if let path = ProcessInfo.processInfo.environment["CLUSTER_HISTORY_DUMP"] {
            Self.dump(records, faults.records, to: path, round: number, origin: start)
        }
        summary.add(round: number, records: records, faults: faults.records, streams: streams, start: start,
                    register: RegisterHistoryCheck(records, objects: HistoryClient.objects, paths: HistoryClient.paths,
                                                   initial: initial, start: start,
                                                   heard: Dictionary(streams[0].map { ($0.value ?? "", $0.seq) },
                                                                     uniquingKeysWith: min)),
                    stream: ObserverStreamCheck(streams, records: records, after: lastMarker, through: markerSeq, marker: marker),
                    session: SessionCheck.violations(records),
                    unexpected: log.unexpected + observers.flatMap { $0.takeProblems() },
                    resumes: observers.map(\.resumeCount), refusedResumes: observers.map(\.refusedResumeCount))
        initial = next
        lastMarker = markerSeq
    }

    /// Appends the round's operations and faults to `path`, a line each in call order, times in ms from the round's start.
    private static func dump(_ records: [RecordedOperation], _ faults: [ClusterFaults.Record], to path: String,
                             round: Int, origin: Double) {
        func ms(_ time: Double?) -> String { time.map { String(format: "%.3f", ($0 - origin) * 1000) } ?? "∞" }
        var lines = faults.map { "round \(round) [\(ms($0.start)), \(ms($0.end))] fault: \($0.name)" }
        lines += records.sorted { $0.call < $1.call }.map {
            "round \(round) [\(ms($0.call)), \(ms($0.returned))] kvod \($0.kvod) client \($0.client): \($0.request) -> \($0.outcome)"
        }
        guard let file = FileHandle(forWritingAtPath: path)
            ?? (FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil)
        else { return }
        file.seekToEndOfFile()
        file.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try? file.close()
    }

    private static func stop(_ clients: [HistoryClient], _ log: HistoryLog) throws {
        log.isStopping = true
        for client in clients where client.done.wait(timeout: .now() + 2 * HistoryClient.answerTimeout + 60) == .timedOut {
            throw TestFailure("history client \(client.number) did not stop")
        }
    }

    /// Writes the round's marker, waits until every observer has heard it,
    /// and makes the final reads on every kvod; the marker's seq, and the state the reads saw.
    private func close(round: Int, marker: String, log: HistoryLog) throws -> (Int, RegisterHistoryCheck.Initial) {
        let client = try LineClient(path: rig.sockets[0])
        let line = #"{"op":"set","object":"end","keyPath":"a","value":"\#(marker)"}"#
        let seq = try Self.change(line, through: client)
        for observer in observers {
            try waitUntil("kvod \(observer.kvod)'s observer hears \(marker)", timeout: 60, recheckEvery: 0.02) {
                observer.hasSeen(value: marker)
            }
        }
        return (seq, try finalReads(upTo: seq, log: log, round: round))
    }

    /// Each kvod's reads of every key path once it has applied `seq`, recorded
    /// in `log` as clients 100, 101, 102; kvod 0's values and modSeqs.
    private func finalReads(upTo seq: Int, log: HistoryLog, round: Int) throws -> RegisterHistoryCheck.Initial {
        var state: RegisterHistoryCheck.Initial = [:]
        for (kvod, socket) in rig.sockets.enumerated() {
            let client = try LineClient(path: socket)
            try waitUntil("kvod \(kvod) has applied seq \(seq)", timeout: 60, recheckEvery: 0.02) {
                (try client.request(#"{"op":"info"}"#).reply["seq"]?.intValue ?? 0) >= seq
            }
            for object in HistoryClient.objects {
                for path in HistoryClient.paths {
                    let call = MonotonicClock.now()
                    let reply = try client.request(#"{"op":"get","object":"\#(object)","keyPath":"\#(path)"}"#).reply
                    guard reply["ok"] == true, let value = reply["value"]?.stringValue, let modSeq = reply["modSeq"]?.intValue,
                          let at = reply["seq"]?.intValue else { throw TestFailure("final read on kvod \(kvod): \(reply)") }
                    log.append(RecordedOperation(client: 100 + kvod, kvod: kvod, request: .get(object: object, path: path),
                                                 call: call, returned: MonotonicClock.now(),
                                                 outcome: .value(value, modSeq: modSeq, seq: at, stale: reply["stale"] == true)))
                    if kvod == 0 { state[object, default: [:]][path] = (value, modSeq) }
                }
            }
        }
        return state
    }
}
