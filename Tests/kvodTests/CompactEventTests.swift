import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Compact events (`"compact":true` on `observe`, issue 16 item 3) against the
/// real kvod: the same change told in fewer bytes, nothing an observation's
/// options ask for left out.
@Suite struct CompactEventTests {
    /// The members a compact event carries in place of the full event's
    /// `event`, `object`, `prefix` and `keyPath`.
    private static let headMembers = ["event", "object", "prefix", "keyPath"]

    @Test func aCompactAndAFullObserverOfOneKeyHearTheSameChanges() throws {
        let kvod = try KVODProcess()
        let compact = try LineClient(path: kvod.socketPath)
        let full = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        let observed = try compact.request(
            #"{"op":"observe","object":"q","keyPath":"jobs","options":["new","old"],"compact":true}"#).reply
        #expect(observed["ok"] == true && observed["o"]?.intValue != nil, "\(observed)")
        #expect(try full.request(#"{"op":"observe","object":"q","keyPath":"jobs","options":["new","old"]}"#)
            .reply["o"] == nil, "a full observation's reply names no number")
        let changes = [#"{"op":"set","object":"q","keyPath":"jobs","value":["a"]}"#,
                       #"{"op":"insert","object":"q","keyPath":"jobs","values":["b","c"]}"#,
                       #"{"op":"replace","object":"q","keyPath":"jobs","index":0,"value":"A"}"#,
                       #"{"op":"remove","object":"q","keyPath":"jobs","indexes":[1]}"#,
                       #"{"op":"delete","object":"q"}"#]
        for line in changes { #expect(try writer.request(line).reply["ok"] == true, "\(line)") }
        for _ in changes {
            let short = try compact.readJSON()
            let long = try full.readJSON()
            #expect(short["o"] == observed["o"], "\(short)")
            for name in Self.headMembers { #expect(short[name] == nil, "\(name) in \(short)") }
            #expect(short["seq"] == long["seq"] && short["new"] == long["new"] && short["old"] == long["old"]
                        && short["indexes"] == long["indexes"], "\(short) against \(long)")
            // The kind is left out when it is a setting, and only then.
            #expect((short["kind"] ?? "setting") == long["kind"], "\(short) against \(long)")
            #expect(long["kind"] != "setting" || short["kind"] == nil, "\(short)")
        }
    }

    @Test func aCompactPrefixObservationNamesTheObjectThatChanged() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try writer.request(#"{"op":"set","object":"svc/web","keyPath":"addr","value":"10.0.0.5"}"#)
            .reply["ok"] == true)
        let observed = try observer.request(
            #"{"op":"observe","prefix":"svc/","keyPath":"addr","options":["new","initial"],"compact":true}"#)
        let number = observed.reply["o"]
        #expect(number?.intValue != nil, "\(observed.reply)")
        #expect(observed.events.count == 1, "\(observed.events)")
        let initial = observed.events.first
        #expect(initial?["o"] == number && initial?["object"] == "svc/web" && initial?["initial"] == true
                    && initial?["new"] == "10.0.0.5" && initial?["prefix"] == nil, "\(String(describing: initial))")
        #expect(try writer.request(#"{"op":"set","object":"svc/db","keyPath":"addr","value":"10.0.0.6"}"#)
            .reply["ok"] == true)
        let event = try observer.readJSON()
        #expect(event["o"] == number && event["object"] == "svc/db" && event["new"] == "10.0.0.6" && event["seq"] == 2,
                "\(event)")
    }

    @Test func aCompactObservationCarriesWhatItsOptionsAskFor() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try writer.request(#"{"op":"set","object":"p","keyPath":"name","value":"x"}"#).reply["ok"] == true)
        // No options: no values. Prior and old: the prior event. The whole document: the changed key path. A context.
        let bare = try observer.request(#"{"op":"observe","object":"p","keyPath":"name","compact":true}"#).reply["o"]
        let prior = try observer.request(
            #"{"op":"observe","object":"p","keyPath":"name","options":["old","prior"],"compact":true,"context":"c"}"#)
            .reply["o"]
        #expect(bare != nil && bare == prior, "the first registration stays and the reply names it")
        let whole = try observer.request(
            #"{"op":"observe","object":"p","options":["new"],"context":{"k":1},"compact":true}"#).reply["o"]
        #expect(whole != nil && whole != bare)
        #expect(try writer.request(#"{"op":"set","object":"p","keyPath":"name","value":"y"}"#).reply["ok"] == true)
        let first = try observer.readJSON()
        let second = try observer.readJSON()
        #expect(first["o"] == whole && first["new"] == ["name": "y"] && first["changedKeyPath"] == "name"
                    && first["context"] == ["k": 1] && first["seq"] == 2, "\(first)")
        #expect(second["o"] == bare && second["new"] == nil && second["old"] == nil && second["seq"] == 2
                    && second["context"] == nil, "\(second)")
        let several = try observer.request(
            #"{"op":"observe","object":"r","keyPaths":["a","b"],"options":["new"],"compact":true}"#).reply
        #expect(several["o"]?.arrayValue?.count == 2, "one number per key path: \(several)")
    }

    @Test func aCompactObservationReplaysAndListsInItsForm() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try writer.request(#"{"op":"set","object":"h","keyPath":"v","value":1}"#).reply["ok"] == true)
        let observed = try observer.request(
            #"{"op":"observe","object":"h","keyPath":"v","options":["new","old"],"since":0,"compact":true}"#)
        let number = observed.reply["o"]
        #expect(observed.events.count == 1 && observed.events.first?["o"] == number
                    && observed.events.first?["new"] == 1 && observed.events.first?["old"] == .null
                    && observed.events.first?["event"] == nil, "\(observed)")
        let listed = try observer.request(#"{"op":"observations"}"#).reply["observations"]?.arrayValue?.first
        #expect(listed?["compact"] == true && listed?["o"] == number, "\(String(describing: listed))")
    }

    @Test func aCongestedCompactObserverGetsItsHeldEventsCompactWithWhatTheyFolded() throws {
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "1m", "--output-soft-limit", "256k",
                                               "--output-soft-seconds", "1"])
        let stuck = try LineClient(path: kvod.socketPath)
        let keys = (0..<4).map { "k\($0)" }
        let keyList = keys.map { "\"\($0)\"" }.joined(separator: ",")
        let numbers = try stuck.request(
            #"{"op":"observe","object":"o","keyPaths":[\#(keyList)],"options":["new"],"compact":true}"#)
            .reply["o"]?.arrayValue?.compactMap(\.intValue) ?? []
        #expect(numbers.count == keys.count, "one number per key path")
        let rounds = 4_000
        let setter = try floodPaddedSets(kvod, keys: keys, rounds: rounds)
        defer { withExtendedLifetime(setter) {} }
        var accounted = 0
        var sawCoalesced = false
        var latest: [Int: Int] = [:]
        while accounted < rounds * keys.count {
            let event = try stuck.readJSON()
            guard let number = event["o"]?.intValue, let n = event["new"]?["n"]?.intValue,
                  let position = numbers.firstIndex(of: number) else {
                Issue.record("not a compact change event of this observation: \(event)")
                return
            }
            #expect(event["event"] == nil && event["keyPath"] == nil, "\(event)")
            #expect(n % keys.count == position, "o names the key path the change was made at: \(event)")
            #expect(n > latest[number, default: -1], "events of one key come in order")
            latest[number] = n
            let folded = event["coalesced"]?.intValue ?? 0
            sawCoalesced = sawCoalesced || folded > 0
            accounted += 1 + folded
        }
        #expect(sawCoalesced, "the client was congested: some events stood for others")
        #expect(accounted == rounds * keys.count)
    }

    @Test func aCompactThatIsNoBooleanIsRefusedAndObservesNothing() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        for value in ["1", #""yes""#, "null"] {
            let reply = try client.request(#"{"op":"observe","object":"o","keyPath":"k","compact":\#(value)}"#).reply
            #expect(reply["error"]?["code"] == "bad_request", "\(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("\"compact\" must be a boolean") == true,
                    "\(reply)")
        }
        let onSet = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1,"compact":true}"#).reply
        #expect(onSet["error"]?["message"] == "unknown field \"compact\" for op \"set\"", "\(onSet)")
        #expect(try client.request(#"{"op":"observations"}"#).reply["observations"] == [], "nothing was observed")
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["error"]?["code"] == "not_found",
                "nothing was set")
    }
}
