#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import KVOClient

// The Swift side of scripts/bench-client.sh (issue 30): how many changes of one
// key path a KVOClient program receives, through a KVOController's closure or a
// `for try await` loop over `changes(of:keyPath:)`.
//
//     kvod-client-rate closure|stream SOCKET N
//         observes bench/0 v (options new, initial) on a kvod, prints "ready"
//         once observing, then counts changes until the one whose value is N-1
//     kvod-client-rate replay-closure|replay-stream N
//         the same reader against recorded bytes: an in-process stand-in for
//         kvod answers the observe and writes N event lines as fast as the
//         socket takes them
//     kvod-client-rate decode-closure|decode-stream N
//         the client's decode-and-deliver path alone: the stand-in answers the
//         observe, then a thread runs N recorded event lines, 64 KiB at a time,
//         through the connection's reader path with no socket
//
// Each prints one line "result role=MODE events=… changes=… seconds=… rate=…
// cpu_us=… rss_mb=…": events delivered, changes they stand for (coalesced ones
// included), the time and process CPU from the first change to the last, and
// the process's peak resident memory. KVOD_CLIENT_RATE_WORK_US=N makes each
// change cost N µs of busy work in the subscriber (a slow subscriber).
// KVOD_CLIENT_RATE_VALUE=object makes the recorded events' values objects,
// {"i":N,"name":…,"tags":[…]} (about 60 bytes), in place of the number N;
// KVOD_CLIENT_RATE_READ=none, with recorded events, makes the subscriber tell
// the last change by its seq, never reading a value (one nobody reads).

/// One line to the script, written at once.
func say(_ line: String) {
    var line = line + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Counts changes and times them from the first to the one with the last value.
final class Tally: @unchecked Sendable {
    // @unchecked: used by one thread at a time (the controller's queue or the iterating task).
    let last: Int
    var events = 0
    var changes = 0
    var start = 0.0
    var cpuStart = 0.0
    let done = DispatchSemaphore(value: 0)

    /// Busy work per change, in nanoseconds (a slow subscriber).
    let workNanoseconds = UInt64(ProcessInfo.processInfo.environment["KVOD_CLIENT_RATE_WORK_US"].flatMap(Int.init) ?? 0)
        * 1_000

    init(last: Int) { self.last = last }

    /// Counts `change`; true once it is the last one.
    func count(_ change: Change) -> Bool {
        if change.isInitial {
            say("ready")
            return false
        }
        if events == 0 {
            start = Date().timeIntervalSinceReferenceDate
            cpuStart = cpuSeconds()
        }
        events += 1
        changes += 1 + (change.coalesced ?? 0)
        if workNanoseconds > 0 {
            let until = DispatchTime.now().uptimeNanoseconds + workNanoseconds
            while DispatchTime.now().uptimeNanoseconds < until {}
        }
        if Self.readsNoValue { return change.seq == UInt64(last + 1) }
        return Self.index(change.new) == last
    }

    static let readsNoValue = ProcessInfo.processInfo.environment["KVOD_CLIENT_RATE_READ"] == "none"
        && CommandLine.arguments.count > 1 && !["closure", "stream"].contains(CommandLine.arguments[1])

    /// The number a value counts: the value itself, or an object value's `i`.
    static func index(_ value: JSONValue?) -> Int? {
        switch value {
        case .number(let number)?: number.intValue
        case .object(let members)?: if case .number(let number)? = members["i"] { number.intValue } else { nil }
        default: nil
        }
    }

    func report(_ role: String) {
        let seconds = Date().timeIntervalSinceReferenceDate - start
        let cpu = (cpuSeconds() - cpuStart) * 1e6 / Double(max(events, 1))
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        say("result role=\(role) events=\(events) changes=\(changes) seconds=\(String(format: "%.4f", seconds)) "
            + "rate=\(Int(Double(events) / seconds)) cpu_us=\(String(format: "%.3f", cpu)) "
            + "rss_mb=\(usage.ru_maxrss / 1024)")
    }
}

final class Observer {}

/// `recorded`: events to feed through the reader path once observing (decode modes).
func readWithClosure(_ connection: KVOConnection, _ tally: Tally, feeding recorded: [UInt8]) {
    let observer = Observer()
    let controller = KVOController(observer: observer, connection: connection)
    controller.observe("bench/0", keyPath: "v", options: [.new, .initial]) { _, _, change in
        if change.isInitial, !recorded.isEmpty { feed(recorded, to: connection) }
        if tally.count(change) { tally.done.signal() }
    }
    tally.done.wait()
    withExtendedLifetime((observer, controller)) {}
}

func readWithStream(_ connection: KVOConnection, _ tally: Tally, feeding recorded: [UInt8]) async throws {
    for try await change in connection.changes(of: "bench/0", keyPath: "v", options: [.new, .initial]) {
        if change.isInitial, !recorded.isEmpty { feed(recorded, to: connection) }
        if tally.count(change) { return }
    }
}

/// A stand-in for kvod on a socket of its own: answers the first request (an
/// observe, with the initial event it asks for) and writes `count` events.
func recordedEvents(_ count: Int) -> [UInt8] {
    var events: [UInt8] = []
    events.reserveCapacity(count * 80)
    let objects = ProcessInfo.processInfo.environment["KVOD_CLIENT_RATE_VALUE"] == "object"
    // What kvod sends KVOClient's observation (compact, its default), or the full form.
    let fullEvents = ProcessInfo.processInfo.environment["KVOD_CLIENT_RATE_EVENTS"] == "full"
    for index in 0..<count {
        let value = objects ? #"{"i":\#(index),"name":"bench value","tags":["red","green","blue"]}"# : "\(index)"
        let line = fullEvents
            ? #"{"event":"change","object":"bench/0","keyPath":"v","kind":"setting","new":\#(value),"seq":\#(index + 1)}"#
            : #"{"o":1,"new":\#(value),"seq":\#(index + 1)}"#
        events += Array(line.utf8)
        events.append(10)
    }
    return events
}

/// Runs `events` through the connection's reader path in reads of about 64 KiB, cut after a newline.
func feed(_ events: [UInt8], to connection: KVOConnection) {
    Thread.detachNewThread {
        events.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                var end = min(all.count, start + 65_536)
                while end < all.count, all[end - 1] != 10 { end += 1 }
                if let error = connection.readForBenchmark(UnsafeRawBufferPointer(rebasing: all[start..<end])) {
                    say("error \(error)")
                    exit(1)
                }
                start = end
            }
        }
    }
}

func startReplayServer(count: Int) -> String {
    let path = "/tmp/kvod-client-rate-\(getpid()).sock"
    unlink(path)
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0, listen(listener, 1) == 0 else { fatalError("cannot listen on \(path)") }
    let recorded = recordedEvents(count)
    Thread.detachNewThread {
        let client = accept(listener, nil, nil)
        var request = [UInt8](repeating: 0, count: 4096)
        _ = read(client, &request, request.count)
        let initial = #"{"event":"change","object":"bench/0","keyPath":"v","kind":"setting","initial":true,"#
            + #""new":null,"seq":0}"#
        let answer = initial + "\n" + #"{"ok":true,"seq":0,"epoch":"replay","o":1}"# + "\n"
        for bytes in [Array(answer.utf8), recorded] {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                guard written > 0 else { return }
                offset += written
            }
        }
        // Keep the socket open until the reader is done (the process exits).
        while read(client, &request, request.count) > 0 {}
    }
    return path
}

let arguments = CommandLine.arguments
let usage = "usage: kvod-client-rate closure|stream SOCKET N | "
    + "replay-closure|replay-stream|decode-closure|decode-stream N"
let mode = arguments.count >= 3 ? arguments[1] : ""
let decode = mode.hasPrefix("decode-")
let replay = mode.hasPrefix("replay-") || decode
guard arguments.count >= 3, let total = Int(arguments[replay ? 2 : 3]), total > 0 else {
    print(usage)
    exit(2)
}
let socketPath = replay ? startReplayServer(count: decode ? 0 : total) : arguments[2]
let recorded = decode ? recordedEvents(total) : []
let tally = Tally(last: total - 1)
do {
    let connection = try KVOConnection(socketPath: socketPath)
    switch mode {
    case "closure", "replay-closure", "decode-closure": readWithClosure(connection, tally, feeding: recorded)
    case "stream", "replay-stream", "decode-stream": try await readWithStream(connection, tally, feeding: recorded)
    default:
        print(usage)
        exit(2)
    }
    tally.report(mode)
    if replay { unlink(socketPath) }
    exit(0)
} catch {
    say("error \(error)")
    exit(1)
}
