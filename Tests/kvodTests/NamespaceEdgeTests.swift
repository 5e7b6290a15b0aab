import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 13's edges against the real kvod: `list`'s limits, a congested
/// whole-document observation, and paging with `after` while the namespace
/// changes between pages.
@Suite struct NamespaceEdgeTests {
    @Test func listWithoutLimitGivesAThousandNamesAndALimitOfTenThousandIsTheMost() throws {
        let kvod = try KVODProcess()
        let writer = try LineClient(path: kvod.socketPath)
        // One more than the largest limit, so that a full page of 10,000 still has one behind it.
        let names = (0..<10_001).map { "obj/" + zeroPadded($0, width: 5) }
        try writer.pipeline(count: names.count) { #"{"op":"set","object":"\#(names[$0])","keyPath":"k","value":\#($0)}"# }

        let byDefault = try writer.request(#"{"op":"list"}"#).reply
        #expect(byDefault["objects"] == .array(names.prefix(1000).map { .string($0) }))
        #expect(byDefault["more"] == true)

        let largest = try writer.request(#"{"op":"list","limit":10000}"#).reply
        #expect(largest["ok"] == true, "\(largest["error"] ?? .null)")
        #expect(largest["objects"] == .array(names.prefix(10_000).map { .string($0) }))
        #expect(largest["more"] == true)
        #expect(largest["seq"]?.intValue == names.count)

        // The one name behind the full page, and nothing after it.
        let rest = try writer.request(#"{"op":"list","limit":10000,"after":"\#(names[9_999])"}"#).reply
        #expect(rest["objects"] == [.string(names[10_000])] && rest["more"] == false)

        let tooMany = try writer.request(#"{"op":"list","limit":10001}"#).reply
        #expect(tooMany["ok"] == false && tooMany["error"]?["code"] == "limit_exceeded", "\(tooMany)")
        #expect(tooMany["objects"] == nil)
    }

    @Test(.onDedicatedThread) func slowWholeDocumentObserverIsCoalescedAndEndsAtTheLatestDocument() throws {
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "1m", "--output-soft-limit", "256k",
                                               "--output-soft-seconds", "1"])
        let stuck = try LineClient(path: kvod.socketPath)
        // No keyPath: the whole document of one object (not a prefix).
        _ = try stuck.request(#"{"op":"observe","object":"doc","options":["new"]}"#)
        let setter = try LineClient(path: kvod.socketPath)
        let members = (0..<10).map { "m\($0)" }
        let rounds = 400
        let sets = rounds * members.count
        let padding = String(repeating: "x", count: 200)
        // Each event carries the whole document (about 2 KB once every member
        // is there), so these sets make about 9 MB of events for the stuck reader.
        try setter.pipeline(count: sets) { index in
            #"{"op":"set","object":"doc","keyPath":"\#(members[index % members.count])","value":{"n":\#(index),"pad":"\#(padding)"}}"#
        }
        try kvod.waitForLog(containing: "is not keeping up")
        let current = try setter.request(#"{"op":"get","object":"doc"}"#).reply
        // Reading now drains kvod's queue; then the held event comes.
        var delivered = 0
        var folded = 0
        var coalescedEvents = 0
        var latest = -1
        var last: JSONValue = .null
        while latest < sets - 1 {
            let event = try stuck.readJSON()
            // The last set this document reflects: the highest n of its members.
            let ns = members.compactMap { event["new"]?[$0]?["n"]?.intValue }
            guard event["event"] == "change", event["object"] == "doc", let n = ns.max() else {
                Issue.record("not a whole-document change event: \(event)")
                return
            }
            #expect(event["keyPath"] == nil, "a whole-document event has no keyPath: \(event)")
            #expect(n > latest, "events come in order: \(n) after \(latest)")
            latest = n
            delivered += 1
            if let count = event["coalesced"]?.intValue {
                coalescedEvents += 1
                folded += count
            }
            last = event
        }
        #expect(coalescedEvents > 0, "congested, yet no event said coalesced")
        // Every set is accounted for: sent, or counted in a `coalesced`.
        #expect(delivered + folded == sets, "\(delivered) delivered + \(folded) folded")
        // The last event is the last change, with the latest whole document.
        #expect(last["coalesced"] != nil, "the event that ends a congestion carries coalesced")
        #expect(last["new"] == current["value"], "\(last["new"] ?? .null) vs \(current["value"] ?? .null)")
        #expect(last["seq"] == current["seq"] && last["seq"]?.intValue == sets)
        #expect(last["changedKeyPath"] == .string(members[(sets - 1) % members.count]))
        for (offset, member) in members.enumerated() {
            #expect(last["new"]?[member]?["n"]?.intValue == (rounds - 1) * members.count + offset)
        }
        // Nothing more was held back.
        let fence = try stuck.request(#"{"op":"ping","id":"after"}"#)
        #expect(fence.events.isEmpty && fence.reply["id"] == "after", "\(fence)")
    }

    @Test func pagingWithAfterReturnsEveryLastingNameOnceInByteOrderWhileOthersComeAndGo() throws {
        let kvod = try KVODProcess()
        let writer = try LineClient(path: kvod.socketPath)
        let churner = try LineClient(path: kvod.socketPath)
        let pager = try LineClient(path: kvod.socketPath)
        let lasting = (0..<300).map { "p/f" + zeroPadded($0, width: 3) }
        // Outside the prefix "p/": never listed.
        let outside = ["p", "p0", "o/x", "q/", "P/f001"]
        try writer.pipeline(count: lasting.count + outside.count) { index in
            let name = index < lasting.count ? lasting[index] : outside[index - lasting.count]
            return #"{"op":"set","object":"\#(name)","keyPath":"k","value":\#(index)}"#
        }
        // What exists under "p/", kept by this test: the requests are made one
        // after another, so each page can be predicted exactly.
        var existing = Set(lasting)
        var churned: [String] = []
        var random = SplitMix64(seed: 13)
        // Appended to a lasting name, each sorts before the next lasting name.
        let suffixes = ["-a", "-Z", "-\u{e9}", "-\u{4e2d}", "~", ".x", "+"]

        var seen: [String] = []
        var after: String?
        var page = 0
        var afterWasDeleted = 0
        while true {
            page += 1
            let afterField = after.map { #","after":"\#($0)""# } ?? ""
            let reply = try pager.request(#"{"op":"list","prefix":"p/","limit":50\#(afterField)}"#).reply
            guard case .array(let listed)? = reply["objects"], let more = reply["more"]?.boolValue else {
                Issue.record("page \(page): not a list reply: \(reply)")
                return
            }
            let names = listed.compactMap(\.stringValue)
            let expected = existing.sorted(by: precedesInBytes).filter { after == nil || precedesInBytes(after!, $0) }
            #expect(names == Array(expected.prefix(50)), "page \(page) after \(after ?? "the start")")
            #expect(more == (expected.count > 50), "page \(page): more")
            for name in names {
                #expect(name.hasPrefix("p/"), "page \(page): \(name) is not under the prefix")
                if let previous = seen.last {
                    #expect(precedesInBytes(previous, name), "page \(page): \(name) after \(previous)")
                }
                seen.append(name)
            }
            guard more, let lastName = names.last, page < 100 else { break }
            after = lastName

            // Between pages, another connection makes names before and after
            // the position (one right after it) and deletes about half of the
            // names it made, on both sides; a last name that is not a lasting
            // one goes too, so the next page starts after a name that is gone.
            let position = lasting.firstIndex { !precedesInBytes($0, lastName) } ?? lasting.count
            var created: [String] = []
            for side in 0..<6 {
                let range = side % 2 == 0 ? 0..<max(position, 1) : min(position, lasting.count - 1)..<lasting.count
                let anchor = lasting[Int.random(in: range, using: &random)]
                created.append(anchor + suffixes[Int.random(in: 0..<suffixes.count, using: &random)] + "\(page)")
            }
            created += [lastName + "+\(page)", "p/a\(page)", "p/z\(page)", "p/"]
            var deleted: [String] = []
            if !lasting.contains(lastName) {
                deleted.append(lastName)
                afterWasDeleted += 1
            }
            for _ in 0..<(churned.count / 2) {
                deleted.append(churned.remove(at: Int.random(in: 0..<churned.count, using: &random)))
            }
            let requests = created.map { #"{"op":"set","object":"\#($0)","keyPath":"k","value":true}"# }
                + deleted.map { #"{"op":"delete","object":"\#($0)"}"# }
            try churner.pipeline(count: requests.count) { requests[$0] }
            existing.formUnion(created)
            existing.subtract(deleted)
            // Every other page, a name made to be the next page's last, so
            // that the page after that one starts after a name deleted
            // meanwhile. The next page's 49th name plus a space sorts just
            // before its 50th: no name here has a byte below a space.
            let upcoming = existing.sorted(by: precedesInBytes).filter { precedesInBytes(lastName, $0) }
            if page % 2 == 1, upcoming.count > 50 {
                let ender = upcoming[48] + " \(page)"
                try churner.pipeline(count: 1) { _ in #"{"op":"set","object":"\#(ender)","keyPath":"k","value":true}"# }
                existing.insert(ender)
            }
            churned = Array(existing.subtracting(lasting))
            churned.sort()
        }
        #expect(page > 6, "the paging took several pages")
        #expect(afterWasDeleted >= 2, "pages started after a name deleted meanwhile")
        #expect(seen.filter { lasting.contains($0) } == lasting, "every lasting name once, in order")
        #expect(seen.contains { !lasting.contains($0) }, "names made between pages were listed too")
    }
}

/// `value` in decimal with leading zeros to `width` digits.
private func zeroPadded(_ value: Int, width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// Whether `a` comes before `b` by their UTF-8 bytes, as kvod orders names.
private func precedesInBytes(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}
