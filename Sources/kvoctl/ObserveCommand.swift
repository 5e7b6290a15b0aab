import ArgumentParser
import Foundation
import KVOClient
import KVOValues

/// `kvoctl observe OBJECT [KEYPATH…]` or `kvoctl observe --prefix PREFIX [KEYPATH…]`
/// `[--new --old --initial --prior] [--since EPOCH:SEQ | --resume-file PATH [--resync]]`
/// `[--distinct] [--kinds K,K] [--throttle D] [--ack]` `[--print-resume] [--count N] [--timeout D]`:
/// one JSON event per line, as kvod sends
/// them (docs/PROTOCOL.md, "Events"). Without a key path, the whole document is observed.
struct ObserveCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "observe",
        abstract: "Print each change of the key paths (or whole documents) as one JSON line, ready for jq.",
        discussion: """
            Without KEYPATH, the whole document is observed: events have no keyPath, new/old are the whole \
            document, and changedKeyPath says where it changed. With --prefix, every object whose name \
            starts with PREFIX is observed (also objects created later); all arguments are key paths, and \
            --initial prints one event per existing object first.
            Runs until interrupted, until --count events were printed (exit 0), or until --timeout \
            passes (exit 0; with --count, exit 4 when fewer events came). Durations take a unit \
            (200ms, 5s, 2m, 1h); a bare number is seconds.
            Quiet observers: kvod itself leaves out what --distinct (sets of an equal value) and --kinds \
            (other kinds) exclude; --throttle 200ms prints at most one event per 200 ms, the latest, with \
            "coalesced":N for the N earlier ones it stands for.
            With --ack, kvoctl acknowledges each event once it has printed it (and standard output took it), \
            so that a writer's kvoctl set --await acknowledged returns once every such observer has it: \
            kvoctl observe config version --new --ack | while read -r event; do apply "$event"; done
            Example: kvoctl observe person/1 name --new --count 1 | jq -r .new
            With --raw (implies --new), each event is one line with only the value after the change: a string \
            as its text, without quotes or escapes, any other value as JSON, and null when the event has none \
            (a delete): kvoctl observe config/web version --raw | while read -r version; do ...; done
            Resuming: with --since EPOCH:SEQ (as kvoctl info and --print-resume print it), the changes after \
            that point come first, then live ones. kvod keeps a bounded history, and an in-memory kvod \
            starts a new epoch at each start: when it cannot replay, exit 6 (compacted), or with --resync \
            print the current values as initial events and go on. A bare SEQ is taken without an epoch: \
            after a restart of kvod without its data it names other changes (a warning says so).
            With --resume-file PATH, kvoctl keeps the point itself: it starts from the point in PATH (no \
            file: from now, and writes one at once) and rewrites PATH atomically after each event it prints. \
            A script runs it in a loop: while :; do kvoctl observe o k --new --resume-file o.k.resume; \
            [ $? = 6 ] && break; sleep 1; done
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Observe every object whose name starts with this prefix (\"\" for all); then no OBJECT.")
    var prefix: String?
    @Argument(help: ArgumentHelp(
        "The object's name (not with --prefix), then dotted key paths (none: the whole document).",
        valueName: "object-or-keypath"))
    var arguments: [String] = []
    @Flag(help: "Events carry the value after the change.") var new = false
    @Flag(help: "Print only each event's new value, a string without quotes or escapes (implies --new).")
    var raw = false
    @Flag(help: "Events carry the value before the change.") var old = false
    @Flag(help: "Print the current value first.") var initial = false
    @Flag(help: "Print an extra event before each change is applied.") var prior = false
    @Option(help: ArgumentHelp("First print the changes after this point (EPOCH:SEQ; a bare SEQ trusts the seq alone).",
                               valueName: "epoch:seq"))
    var since: String?
    @Option(help: ArgumentHelp("Start from the point in this file (none: from now); rewrite it after each event.",
                               valueName: "path"))
    var resumeFile: String?
    @Flag(help: "When kvod cannot replay from --since or --resume-file, print the current values and go on.")
    var resync = false
    @Flag(help: "Print a change only when the value at the key path changed (not a set of an equal value).")
    var distinct = false
    @Option(help: ArgumentHelp("Print only changes of these kinds, comma-separated: "
                                   + "setting, insertion, removal, replacement.", valueName: "kinds"))
    var kinds: String?
    @Option(help: ArgumentHelp("Print at most one change per this interval (200ms, 1s; 1ms to 1h): the latest, "
                                   + "with \"coalesced\":N.", valueName: "duration"))
    var throttle: DurationArgument?
    @Flag(help: "Acknowledge each event once it is printed, for writers' --await acknowledged.")
    var ack = false
    @Flag(help: "Add \"resume\":\"EPOCH:SEQ\" to each event: where to resume after it.") var printResume = false
    @Option(help: "Exit after this many events.") var count: Int?
    @Option(help: ArgumentHelp("Exit after this long (5s, 500ms; a bare number is seconds).", valueName: "duration"))
    var timeout: DurationArgument?

    func validate() throws {
        if prefix == nil && arguments.isEmpty { throw ValidationError("give an OBJECT, or --prefix PREFIX") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let timeout, timeout.duration <= .zero {
            throw ValidationError("--timeout must be a positive duration (5s, 500ms, or seconds), not \(timeout)")
        }
        _ = try sincePoint
        _ = try delivery
        if since != nil && resumeFile != nil { throw ValidationError("--since and --resume-file exclude each other") }
        if initial && (since != nil || resumeFile != nil) {
            throw ValidationError("--initial excludes --since and --resume-file: the replay brings the output up to date")
        }
        if raw && (old || prior || printResume) {
            throw ValidationError("--raw prints only the new value: it excludes --old, --prior and --print-resume")
        }
        if resync && since == nil && resumeFile == nil { throw ValidationError("--resync goes with --since or --resume-file") }
        if keyPaths.count > 1 && (resumeFile != nil || printResume) {
            throw ValidationError("""
                --resume-file and --print-resume follow one key path or a whole document: one change can reach \
                several key paths with one seq, so no single point says where a stream of several stopped; \
                run one kvoctl per key path
                """)
        }
    }

    /// `--since` read; nil without it.
    var sincePoint: ResumePoint? {
        get throws(ValidationError) {
            guard let since else { return nil }
            guard let point = ResumePoint(since) else {
                throw ValidationError("--since takes EPOCH:SEQ, as kvoctl info and observe --print-resume print it "
                                          + "(or a bare SEQ), not \(since)")
            }
            return point
        }
    }

    /// `--distinct`, `--kinds` and `--throttle` read.
    var delivery: DeliveryOptions {
        get throws(ValidationError) {
            var delivery = DeliveryOptions(distinct: distinct, acknowledges: ack)
            if let kinds {
                var chosen: Set<ChangeKind> = []
                for name in kinds.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let kind = ChangeKind(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                        throw ValidationError("--kinds takes setting, insertion, removal, replacement "
                                                  + "(comma-separated), not \(name)")
                    }
                    chosen.insert(kind)
                }
                delivery.kinds = chosen
            }
            if let throttle {
                let limit = Int64(ThrottleLimit.milliseconds)
                try throttle.check("--throttle", upTo: limit, "1h (\(limit) ms, kvod's throttle limit)")
                delivery.throttle = throttle.duration
            }
            return delivery
        }
    }

    /// The observed key paths (none: whole documents).
    var keyPaths: [String] { Array(arguments.dropFirst(prefix == nil ? 1 : 0)) }

    var options: ObservationOptions {
        var options: ObservationOptions = []
        if new || raw { options.insert(.new) }
        if old { options.insert(.old) }
        if initial { options.insert(.initial) }
        if prior { options.insert(.prior) }
        return options
    }

    func run() async throws {
        let file = resumeFile.map(ResumeFile.init)
        let start = try file?.read() ?? sincePoint
        if let start, start.epoch == nil {
            connection.note("""
                warning: \(file.map { "--resume-file \($0.path) holds" } ?? "--since") \(start.seq) without an epoch: \
                if kvod restarted without its data, that seq counts another history; give EPOCH:SEQ (kvoctl info)
                """)
        }
        let session = ObserveSession(
            prefix: prefix, object: arguments.first ?? "", keyPaths: keyPaths, options: options,
            delivery: try delivery, count: count, timeout: timeout, printResume: printResume, raw: raw,
            resync: resync, file: file, connectionOptions: connection)
        let outcome = try await connection.run { connection throws(KVOClientError) in
            try await session.watch(connection, from: start)
        }
        switch outcome {
        case .counted, .ended: return
        case .timedOut(let printed):
            if let count, let timeout {
                throw CommandFailure(ExitStatus.timedOut,
                                     "timed out: \(printed) of \(count) events within \(timeout.spoken)")
            }
        case .failed(let failure): throw failure
        }
    }
}
