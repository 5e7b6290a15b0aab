import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues

/// An observer of every object's `a` and `b` (prefix `""`) on one kvod, on
/// a thread of its own, keeping each event line it reads. When its
/// connection breaks (its kvod was killed) it connects again once the kvod
/// is back and resumes as docs/PROTOCOL.md says a client must ("Resuming"):
/// `since` = the last seq it read − 1, dropping the first events of that seq
/// the replay brings, as many as it had read, which must be the same lines.
/// `policy: disconnect`: an observer that fell behind is cut off and resumes,
/// rather than have events folded.
///
/// @unchecked Sendable: `events`, `failures` and `stopped` are only touched
/// with `lock` held; the rest by the observer's thread only.
final class StreamObserver: @unchecked Sendable {
    /// One event as it came, with what the checks read of it.
    struct Event: Sendable, Equatable {
        let line: String
        let seq: Int
        let object: String
        let path: String
        let value: String?
    }

    let kvod: Int
    let socketPath: String
    private let lock = NSLock()
    private var events: [Event] = []
    private var failures: [String] = []
    private var stopped = false
    /// How many times it resumed after its connection broke.
    private var resumes = 0
    /// How many resumes its kvod refused while it was stale, still short of the seq resumed from.
    private var refusedResumes = 0
    private(set) var startSeq = 0
    private var epoch: JSONValue = .null
    private let done = DispatchSemaphore(value: 0)

    static let request: JSONObject = ["op": "observe", "prefix": "", "keyPaths": ["a", "b"], "options": ["new"],
                                      "policy": "disconnect"]

    /// Observes at once (the reply's seq is ``startSeq``), then reads on a thread of its own.
    init(kvod: Int, socketPath: String) throws {
        self.kvod = kvod
        self.socketPath = socketPath
        let client = try LineClient(path: socketPath)
        let reply = try client.request(String(decoding: JSONValue.object(Self.request).jsonBytes, as: UTF8.self)).reply
        guard reply["ok"] == true, let seq = reply["seq"]?.intValue, let epoch = reply["epoch"] else {
            throw TestFailure("observe on kvod \(kvod): \(reply)")
        }
        startSeq = seq
        self.epoch = epoch
        connection = client
        let thread = Thread { [self] in
            read()
            done.signal()
        }
        thread.name = "ClusterHistory.observer\(kvod)"
        thread.start()
    }

    var received: [Event] { lock.withLock { events } }
    /// What went wrong since the last call, which is forgotten here (a round's).
    func takeProblems() -> [String] {
        lock.withLock {
            defer { failures = [] }
            return failures
        }
    }
    var resumeCount: Int { lock.withLock { resumes } }
    var refusedResumeCount: Int { lock.withLock { refusedResumes } }
    private var isStopped: Bool { lock.withLock { stopped } }

    /// The events up to and including seq `last`, which are forgotten here (a round's).
    func take(through last: Int) -> [Event] {
        lock.withLock {
            let count = events.firstIndex { $0.seq > last } ?? events.count
            defer { events.removeFirst(count) }
            return Array(events[..<count])
        }
    }

    /// Whether it has read an event of `value`.
    func hasSeen(value: String) -> Bool { lock.withLock { events.contains { $0.value == value } } }

    func stop() {
        lock.withLock { stopped = true }
        done.wait()
    }

    private func fail(_ text: String) { lock.withLock { failures.append("observer on kvod \(kvod): \(text)") } }

    /// The last seq read and its event lines: where a resume starts.
    private var last = (seq: 0, lines: [String]())

    /// The connection the observer reads, nil while it is broken: its thread's alone once started.
    private var connection: LineClient?

    private func read() {
        var client = connection
        last = (startSeq, [])
        while !isStopped {
            guard let connection = client ?? resume() else { continue }
            client = connection
            do {
                let line = try connection.readLine(timeout: 0.25)
                if let event = parse(line) { keep(event) }
            } catch is EndOfStream {
                client = nil
            } catch let failure as TestFailure where failure.description.hasPrefix("no a line within") {
                // Nothing within the timeout: the loop looks at `stopped` and reads on, keeping what it had.
            } catch {
                fail("\(error)")
                client = nil
            }
        }
    }

    private func keep(_ event: Event) {
        last = event.seq == last.seq ? (last.seq, last.lines + [event.line]) : (event.seq, [event.line])
        lock.withLock { events.append(event) }
    }

    private func parse(_ line: String) -> Event? {
        guard let event = try? JSONReader.parse(Array(line.utf8)), event["event"] == "change",
              let seq = event["seq"]?.intValue, let object = event["object"]?.stringValue,
              let path = event["keyPath"]?.stringValue else {
            fail("not a change event: \(line)")
            return nil
        }
        if event["coalesced"] != nil || event["resync"] != nil { fail("folded or resynced: \(line)") }
        return Event(line: line, seq: seq, object: object, path: path, value: event["new"]?.stringValue)
    }

    /// Connects again once the kvod takes connections and resumes after the
    /// last seq read; nil while it cannot (the caller's loop tries again).
    private func resume() -> LineClient? {
        guard let client = try? LineClient(path: socketPath) else {
            try? waitUntil("kvod \(kvod) accepts connections", timeout: 0.25, recheckEvery: 0.02) {
                UnixSockets.canConnect(socketPath)
            }
            return nil
        }
        var request = Self.request
        // A seq read in part is replayed whole, from the one before; a seq known whole (the observe's) is not.
        request["since"] = .number(JSONNumber(last.lines.isEmpty ? last.seq : last.seq - 1))
        request["epoch"] = epoch
        do {
            try client.send(String(decoding: JSONValue.object(request).jsonBytes, as: UTF8.self))
            var replayed: [String] = []
            while true {
                let line = try client.readLine(timeout: 30)
                if (try? JSONReader.parse(Array(line.utf8)))?["ok"] == nil {
                    replayed.append(line)
                    continue
                }
                let reply = try? JSONReader.parse(Array(line.utf8))
                guard reply?["ok"] == true else {
                    // A kvod still replaying its start window after a lost watch has not reached that seq yet:
                    // while it is stale it says `unavailable` (docs/PROTOCOL.md, "Over etcd"); try again once
                    // it follows. Any other refusal is a failure.
                    if reply?["error"]?["code"] == "unavailable",
                       (reply?["error"]?["message"]?.stringValue ?? "").contains("catching up with etcd") {
                        lock.withLock { refusedResumes += 1 }
                        try? waitUntil("kvod \(kvod) follows etcd", timeout: 1, recheckEvery: 0.05) {
                            ClusterHistoryRig.follows(socketPath)
                        }
                    } else {
                        fail("resume after seq \(last.seq): \(line)")
                    }
                    return nil
                }
                break
            }
            let held = last.lines
            if Array(replayed.prefix(held.count)) != held {
                fail("the replay from seq \(last.seq) does not begin with the \(held.count) events read: "
                    + "\(replayed.prefix(held.count)) vs \(held)")
            }
            for line in replayed.dropFirst(held.count) {
                if let event = parse(line) { keep(event) }
            }
            lock.withLock { resumes += 1 }
            return client
        } catch {
            return nil
        }
    }
}
