#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import KVOEngine

// Runs one request spelling through the decoder or the whole engine N times,
// for callgrind: instructions per request are (Ir at N) − (Ir at 0), ÷ N.
//
//     kvod-decode-profile decode|handle SPELLING N
//
// The spellings are how real clients write the same requests (docs/PERFORMANCE.md,
// "One decoder for every spelling"). Both keep one `RequestDecoder`, as the daemon
// does; `handle` hands each decoded request to `Engine.handle(_:from:)` with one
// observer of the set key path and drains every output, as the daemon would.

/// One request in each client's spelling; `id` is the request's id where the spelling carries one.
enum Spelling: String, CaseIterable {
    case canonical, idFirst = "id-first", jsonDumps = "json-dumps", shuffled, escaped
    case getCanonical = "get-canonical", getJSONDumps = "get-json-dumps"
    case observeCanonical = "observe-canonical", observeJSONDumps = "observe-json-dumps"

    func line(_ index: Int) -> String {
        let value = "\"\(index),1732530000123456\""
        switch self {
        case .canonical: return #"{"op":"set","object":"bench/0","keyPath":"v","value":\#(value)}"#
        case .idFirst: return #"{"id":\#(index),"op":"set","object":"bench/0","keyPath":"v","value":\#(value)}"#
        case .jsonDumps: return #"{"op": "set", "object": "bench/0", "keyPath": "v", "value": \#(value), "id": \#(index)}"#
        case .shuffled: return #"{"value":\#(value),"keyPath":"v","id":\#(index),"object":"bench/0","op":"set"}"#
        case .escaped: return #"{"op":"set","object":"bench\/0","keyPath":"v","value":\#(value),"id":\#(index)}"#
        case .getCanonical: return #"{"op":"get","object":"bench/0","keyPath":"v"}"#
        case .getJSONDumps: return #"{"op": "get", "object": "bench/0", "keyPath": "v", "id": \#(index)}"#
        case .observeCanonical:
            return #"{"op":"observe","object":"bench/\#(index)","keyPath":"v","options":["new"]}"#
        case .observeJSONDumps:
            return #"{"op": "observe", "object": "bench/\#(index)", "keyPath": "v", "options": ["new"], "id": \#(index)}"#
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let spelling = Spelling(rawValue: arguments[2]), let count = Int(arguments[3]),
      ["decode", "handle"].contains(arguments[1]) else {
    print("usage: kvod-decode-profile decode|handle \(Spelling.allCases.map(\.rawValue).joined(separator: "|")) N")
    exit(2)
}
// Lines made before the loop: a thousand distinct ones, cycled.
let lines = (0..<1000).map { Array(spelling.line($0).utf8) }
var sink = 0
var decoder = RequestDecoder()
if arguments[1] == "decode" {
    for round in 0..<count {
        lines[round % lines.count].withUnsafeBytes { line in
            if case .request = decoder.decode(line) { sink &+= 1 }
        }
    }
} else {
    let engine = Engine()
    // KVOD_PROFILE_OBSERVERS: how many clients observe the key path (default 1).
    let observerCount = Int(getenv("KVOD_PROFILE_OBSERVERS").map { String(cString: $0) } ?? "1") ?? 1
    let observers = (0..<observerCount).map { _ in engine.makeClient() }
    let client = engine.makeClient()
    // KVOD_PROFILE_COMPACT=1: the observers ask for compact events.
    let compact = getenv("KVOD_PROFILE_COMPACT").map { String(cString: $0) } == "1"
    let observe = Array((compact ? #"{"op":"observe","object":"bench/0","keyPath":"v","options":["new"],"compact":true}"#
        : #"{"op":"observe","object":"bench/0","keyPath":"v","options":["new"]}"#).utf8)
    for observer in observers { observe.withUnsafeBytes { engine.handle(decoder.decode($0), from: observer) } }
    var drained: [UInt8] = []
    for round in 0..<count {
        lines[round % lines.count].withUnsafeBytes { engine.handle(decoder.decode($0), from: client) }
        drained.removeAll(keepingCapacity: true)
        client.takeOutput(into: &drained)
        sink &+= drained.count
        for observer in observers {
            drained.removeAll(keepingCapacity: true)
            observer.takeOutput(into: &drained)
            sink &+= drained.count
        }
    }
}
print(sink)
