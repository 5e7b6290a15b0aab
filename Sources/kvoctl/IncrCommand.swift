import ArgumentParser
import KVOClient

/// `kvoctl incr OBJECT KEYPATH [BY]`: kvod's `add`; prints the sum.
struct IncrCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "incr", abstract: "Add BY (default 1) to the integer at a key path; prints the new value.",
        discussion: """
            One change, however many clients add at once: no read, no --if-mod-seq loop. Nothing there \
            counts as 0. BY may be negative (kvoctl incr quota/alice bytes -4096). The value and the sum \
            must be integers from -2^53 to 2^53 (9007199254740992): anything else is kvod's bad_request, exit \
            10, and nothing changes.
            With --await, prints {"seq":S,"observers":N,"acknowledged":M} instead of the value, as set does.
            --raw is taken as by get: a number prints the same with it.
            Example: n=$(kvoctl incr --quiet stats/web hits) || exit
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @OptionGroup var waiting: AwaitOptions
    @Option(help: ArgumentHelp(
        "kvod deletes the value this long after the add, as after a set --ttl; an incr without it ends the "
            + "deadline the value had. 500ms, 30s, 5m, 2h, or seconds (30).",
        valueName: "duration"))
    var ttl: DurationArgument?
    @Flag(help: "Taken as by get: the new value is a number, printed the same with or without it.") var raw = false
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "The object's name, a dotted key path, and the integer to add (default 1; -5 subtracts 5).",
        valueName: "object keypath [by]"))
    var words: [String] = []

    /// The object, the key path and the amount.
    private var parts: (object: String, keyPath: String, amount: Int) {
        get throws(ValidationError) {
            let words = try PositionalWords.values(words)
            guard (2...3).contains(words.count) else { throw ValidationError("give OBJECT KEYPATH and, if not 1, BY") }
            guard words.count == 3 else { return (words[0], words[1], 1) }
            guard let amount = Int(words[2]) else {
                throw ValidationError("BY must be an integer (1, -5), not \(words[2])")
            }
            return (words[0], words[1], amount)
        }
    }

    func validate() throws {
        _ = try parts
        try ttl?.check("--ttl", upTo: 31_536_000_000, "a year (8760h)")
    }

    func run() async throws {
        let (object, keyPath, amount) = try parts
        let (ifModSeq, ifValue, ttl) = (conditions.ifModSeq, try conditions.parsedIfValue, ttl?.duration)
        try await connection.run { connection throws(KVOClientError) in
            guard waiting.awaitCondition == nil else {
                let operation = WriteOperation.add(object, keyPath, by: amount, ifModSeq: ifModSeq, ifValue: ifValue,
                                                   ttl: ttl)
                return try await waiting.perform(operation, on: connection)
            }
            let sum = try await connection.add(object, keyPath, by: amount, ifModSeq: ifModSeq, ifValue: ifValue,
                                               ttl: ttl)
            Output.line(String(sum))
        }
    }
}
