#if canImport(Glibc)
import Glibc
#endif
import KVOClient

// One observer of kvod-bench's fan-out for the KVOClient scenario: a KVOClient
// connection observing one key path (options new and initial), as a Swift
// program observes kvod. It prints `ready` when the initial value came, then
// `p <index> <events> <out of order>` after every 256th event (the setter's
// index in the value, and what it counted), so that kvod-bench can bound the
// events in flight and count them; it runs until kvod-bench ends it.
//
//     kvod-bench-observer SOCKET OBJECT KEYPATH

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    print("usage: kvod-bench-observer SOCKET OBJECT KEYPATH")
    exit(2)
}
/// One line to kvod-bench, written at once (no stdio buffering to wait behind).
func say(_ line: String) {
    var line = line + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

do {
    let connection = try KVOConnection(socketPath: arguments[1])
    var ready = false
    var events = 0
    var outOfOrder = 0
    var last = -1
    for try await change in connection.changes(of: arguments[2], keyPath: arguments[3], options: [.new, .initial]) {
        guard ready else {
            ready = true
            say("ready")
            continue
        }
        events += 1
        // The value is "<index>,<send time>", as kvod-bench's other observers read it.
        guard case .string(let payload)? = change.new, let index = Int(payload.prefix { $0 != "," }) else {
            outOfOrder += 1
            continue
        }
        if index <= last { outOfOrder += 1 }
        last = index
        if events & 255 == 0 { say("p \(last) \(events) \(outOfOrder)") }
    }
} catch {
    say("error \(error)")
    exit(1)
}
