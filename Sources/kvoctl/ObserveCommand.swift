import ArgumentParser
import KVOClient

/// `kvoctl observe OBJECT [KEYPATH…]` or `kvoctl observe --prefix PREFIX [KEYPATH…]`
/// `[--new --old --initial --prior] [--since SEQ] [--count N] [--timeout S]`:
/// one JSON event per line, as kvod sends them (docs/PROTOCOL.md, "Events").
/// Without a key path, the whole document is observed.
struct ObserveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "observe",
        abstract: "Print each change of the key paths (or whole documents) as one JSON line, ready for jq.",
        discussion: """
            Without KEYPATH, the whole document is observed: events have no keyPath, new/old are the whole \
            document, and changedKeyPath says where it changed. With --prefix, every object whose name \
            starts with PREFIX is observed (also objects created later); all arguments are key paths, and \
            --initial prints one event per existing object first.
            Runs until interrupted, until --count events were printed (exit 0), or until --timeout \
            seconds pass (exit 0; with --count, exit 4 when fewer events came).
            Example: kvoctl observe person/1 name --new --count 1 | jq -r .new
            With --since SEQ, the changes after SEQ come first (kvod keeps a bounded history; \
            exit 1 with compacted when it no longer holds them), then live ones.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Observe every object whose name starts with this prefix (\"\" for all); then no OBJECT.")
    var prefix: String?
    @Argument(help: ArgumentHelp(
        "The object's name (not with --prefix), then dotted key paths (none: the whole document).",
        valueName: "object-or-keypath"))
    var arguments: [String] = []
    @Flag(help: "Events carry the value after the change.") var new = false
    @Flag(help: "Events carry the value before the change.") var old = false
    @Flag(help: "Print the current value first.") var initial = false
    @Flag(help: "Print an extra event before each change is applied.") var prior = false
    @Option(help: "First print the changes after this seq (a seq printed earlier).") var since: UInt64?
    @Option(help: "Exit after this many events.") var count: Int?
    @Option(help: "Exit after this many seconds.") var timeout: Double?

    func validate() throws {
        if prefix == nil && arguments.isEmpty { throw ValidationError("give an OBJECT, or --prefix PREFIX") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds") }
        if since != nil && initial { throw ValidationError("--since and --initial exclude each other") }
    }

    private enum Outcome: Sendable { case counted, timedOut, ended }

    private var options: ObservationOptions {
        var options: ObservationOptions = []
        if new { options.insert(.new) }
        if old { options.insert(.old) }
        if initial { options.insert(.initial) }
        if prior { options.insert(.prior) }
        return options
    }

    func run() async throws {
        let outcome = try await connection.run { connection throws(KVOClientError) in try await watch(connection) }
        if outcome == .timedOut && count != nil { throw ExitStatus.timedOut }
    }

    /// The stream of what the arguments name: an object's or a prefix's key paths, or whole documents.
    private func changes(_ connection: KVOConnection) -> ChangeStream {
        if let prefix {
            return arguments.isEmpty
                ? connection.changes(prefix: prefix, options: options, since: since)
                : connection.changes(prefix: prefix, keyPaths: arguments, options: options, since: since)
        }
        let object = arguments[0], keyPaths = Array(arguments.dropFirst())
        return keyPaths.isEmpty
            ? connection.changes(of: object, options: options, since: since)
            : connection.changes(of: object, keyPaths: keyPaths, options: options, since: since)
    }

    /// Prints events until the count is reached, the time is up, or the stream fails.
    private func watch(_ connection: KVOConnection) async throws(KVOClientError) -> Outcome {
        let stream = changes(connection)
        let (count, timeout) = (count, timeout)
        let first = await withTaskGroup(of: Result<Outcome, KVOClientError>.self) { group in
            group.addTask {
                var printed = 0
                do throws(KVOClientError) {
                    for try await change in stream {
                        Output.line(ChangeLine.json(change))
                        printed += 1
                        if let count, printed >= count { return .success(.counted) }
                    }
                    return .success(.ended)
                } catch {
                    return .failure(error)
                }
            }
            if let timeout {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                    return .success(.timedOut)
                }
            }
            let first = await group.next() ?? .success(.ended)
            group.cancelAll()
            return first
        }
        return try first.get()
    }
}
