import ArgumentParser
import KVOClient
import KVOValues

/// `kvoctl set OBJECT [KEYPATH] VALUE`: prints the change's seq. Without
/// KEYPATH, VALUE (a JSON object) replaces the whole document.
struct SetCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set the value at a key path; prints the change's seq.",
        discussion: """
            With two arguments, VALUE replaces the whole document and must be a JSON object: \
            kvoctl set person/1 '{"name":"x"}'
            VALUE is JSON (-5 works too); a bare word is a string, but a word that looks like JSON and is not \
            (1e400, True, NaN, 01, +1) is a usage error: quote it ('"01"') or pass --string. \
            With --json-file PATH (- for standard input) the value comes from there and VALUE is left out. \
            After --, every argument is taken as given: kvoctl set --string o k -- --not-an-option
            With --ephemeral the value goes when kvoctl's connection closes; add --hold to keep it \
            open until SIGINT or SIGTERM (then exit 0, and the value goes): how a script holds a presence. \
            Example: kvoctl set --ephemeral --hold --if-mod-seq 0 election/web leader '"host-a"'
            With --await acknowledged, kvoctl returns once every observer that acknowledges (kvoctl observe \
            --ack) has acted on the change, and prints {"seq":S,"observers":N,"acknowledged":M}; when \
            --timeout (default 5s) passes first it prints the same line and exits 7, the change applied. \
            Example: kvoctl set --await acknowledged --timeout 30s config version 42
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @OptionGroup var values: ValueOptions
    @OptionGroup var waiting: AwaitOptions
    @Flag(help: "The value belongs to this connection: kvod deletes it when the connection closes.")
    var ephemeral = false
    @Option(help: ArgumentHelp(
        "kvod deletes the value this long after the set (at most a year): 500ms, 30s, 5m, 2h, or seconds (30).",
        valueName: "duration"))
    var ttl: DurationArgument?
    @Flag(help: "After the set, stay connected until SIGINT or SIGTERM, then exit 0.") var hold = false
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "The object's name (e.g. person/1), a dotted key path (e.g. address.city; leave out to replace the "
            + "whole document), and the value (JSON, or a bare word taken as a string; none with --json-file).",
        valueName: "object [keypath] value"))
    var words: [String] = []

    /// The object, the key path (nil for the whole document), and VALUE's text (nil with --json-file).
    private var parts: (object: String, keyPath: String?, value: String?) {
        get throws(ValidationError) {
            let words = try PositionalWords.values(words)
            let valueCount = values.jsonFile == nil ? 1 : 0
            guard (1 + valueCount...2 + valueCount).contains(words.count) else {
                throw ValidationError(values.jsonFile == nil
                    ? "give OBJECT KEYPATH VALUE, or OBJECT VALUE for the whole document"
                    : "with --json-file, give OBJECT KEYPATH, or OBJECT for the whole document")
            }
            let keyPath = words.count == 2 + valueCount ? words[1] : nil
            return (words[0], keyPath, valueCount == 1 ? words.last : nil)
        }
    }

    func validate() throws {
        let (_, keyPath, text) = try parts
        if let text { try Self.check(try values.value(text), replacesDocument: keyPath == nil) }
        try ttl?.check("--ttl", upTo: 31_536_000_000, "a year (8760h)")
    }

    /// Without KEYPATH only an object will do: `set OBJECT WORD` is likelier a forgotten VALUE.
    private static func check(_ value: JSONValue, replacesDocument: Bool) throws(ValidationError) {
        guard replacesDocument else { return }
        guard case .object = value else {
            throw ValidationError("without KEYPATH, the value replaces the whole document and must be a JSON object")
        }
    }

    func run() async throws {
        let (object, keyPath, text) = try parts
        guard let value = try text.map(values.value) ?? values.fileValue() else {
            throw ValidationError("give VALUE or --json-file")
        }
        try Self.check(value, replacesDocument: keyPath == nil)
        let operation = WriteOperation.set(
            object, keyPath, to: value, ifModSeq: conditions.ifModSeq,
            ifValue: try conditions.parsedIfValue, ephemeral: ephemeral, ttl: ttl?.duration)
        let interruption = hold ? Hold.Interruption() : nil
        try await connection.run { connection throws(KVOClientError) in
            try await waiting.perform(operation, on: connection)
            if let interruption { try await Hold.untilInterrupted(connection, watching: object, keyPath, interruption) }
        }
    }
}
