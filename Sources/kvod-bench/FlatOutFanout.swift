/// Fan-out driven as the outside load generator of issue 16 drove it: one
/// setter flat out (64 sets unanswered, never waiting for observers to catch
/// up), one observer thread reading every observer connection over epoll.
/// With no bound on events in flight the observers can fall behind; kvod then
/// coalesces each one's events (`"coalesced":N`, docs/PROTOCOL.md "Slow
/// readers") where Redis buffers every message, so besides the events
/// delivered it reports what they stood for, and what each server spent.
/// With `lagBound`, the same load held back as the fanout scenario holds it
/// (at most max(64 × observers, 8192) events in flight), for comparison.
/// With `compact`, kvod's observers ask for compact events.
enum FlatOutFanout {
    static func run(_ server: ServerProcess, _ sizes: Sizes, observers count: Int,
                    lagBound: Bool, compact: Bool = false) throws(BenchError) -> ScenarioResult {
        var wire = Wire(peer: server.peer, flavour: .pubSub)
        wire.compactEvents = compact
        let key = Scenario.fanoutKey
        let observers = try Scenario.observersOfOneKey(server, wire, key, count: count)
        let setter = try Connection(path: server.socketPath, wire: wire)
        let before = server.peer == .kvod ? try KvodInfo.read(server.socketPath) : nil
        var load = ChangeLoad(
            setters: [setter], observers: observers, prefixes: [wire.changePrefix(key)], fanout: [count],
            choice: .perConnection, pipeline: sizes.fanoutPipeline, maxLagEvents: lagBound ? max(sizes.fanoutPipeline * count, 8192) : .max, rate: nil,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: sizes.durationSeconds)
        load.coalescingAllowed = !lagBound
        load.observerReadBytes = sizes.observerReadBytes
        load.server = server
        let outcome = load.run()
        var problems = outcome.problems
        var notes: [String] = []
        if let before {
            let after = try KvodInfo.read(server.socketPath)
            let counted = after.eventsCoalesced - before.eventsCoalesced
            if counted != outcome.coalesced {
                problems.append("info counted \(counted) events coalesced, the observers \(outcome.coalesced)")
            }
            if outcome.coalesced > 0 {
                notes.append("info eventsCoalesced \(before.eventsCoalesced) → \(after.eventsCoalesced)")
            }
        }
        let row = (lagBound ? "fanout with lag bound" : "fanout flat out") + ", \(count) observers"
            + (compact ? ", compact events" : "")
        let seen = outcome.eventsPerSecond + outcome.coalescedPerSecond
        return ScenarioResult(
            figures: [
                Figure(row: row + ", events delivered", unit: "events/s", higherIsBetter: true, value: outcome.eventsPerSecond),
                Figure(row: row + ", changes delivered or coalesced", unit: "events/s", higherIsBetter: true, value: seen),
                Figure(row: row + ", coalesced", unit: "% of changes", higherIsBetter: false,
                       value: seen > 0 ? 100 * outcome.coalescedPerSecond / seen : 0),
                Figure(row: row + ", setter", unit: "sets/s", higherIsBetter: true, value: outcome.setsPerSecond),
                Figure(row: row + ", bytes read per event", unit: "B", higherIsBetter: false, value: outcome.bytesPerEvent),
                Figure(row: row + ", observer thread busy", unit: "% of a core", higherIsBetter: false,
                       value: 100 * outcome.readerBusy),
                Figure(row: row + ", observer thread CPU per event", unit: "ns", higherIsBetter: false,
                       value: outcome.eventsPerSecond > 0 ? 1e9 * outcome.readerBusy / outcome.eventsPerSecond : 0),
                Figure(row: row + ", server CPU per event delivered", unit: "ns", higherIsBetter: false,
                       value: 1000 * outcome.serverMicrosecondsPerEvent),
                Figure(row: row + ", server RSS at the window's end", unit: "MiB", higherIsBetter: false,
                       value: Double(outcome.serverResidentBytes) / 1_048_576),
            ],
            problems: problems, notes: notes)
    }
}
