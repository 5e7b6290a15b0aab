import ArgumentParser
import KVOClient
import KVOEngine

/// `kvoctl set OBJECT [KEYPATH] VALUE`: prints the change's seq. Without
/// KEYPATH, VALUE (a JSON object) replaces the whole document.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set the value at a key path; prints the change's seq.",
        discussion: """
            With two arguments, VALUE replaces the whole document and must be a JSON object: \
            kvoctl set person/1 '{"name":"x"}'
            With --ephemeral the value goes when kvoctl's connection closes; add --hold to keep it \
            open until SIGINT or SIGTERM (then exit 0, and the value goes): how a script holds a presence. \
            Example: kvoctl set --ephemeral --hold --if-mod-seq 0 election/web leader '"host-a"'
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @Flag(help: "The value belongs to this connection: kvod deletes it when the connection closes.")
    var ephemeral = false
    @Option(help: ArgumentHelp("kvod deletes the value this many seconds after the set (at most a year).",
                               valueName: "seconds"))
    var ttl: Double?
    @Flag(help: "After the set, stay connected until SIGINT or SIGTERM, then exit 0.") var hold = false
    @Argument(help: "The object's name, e.g. person/1.") var object: String
    @Argument(help: ArgumentHelp("A dotted key path, e.g. address.city; leave out to replace the whole document.",
                                 valueName: "keypath"))
    var keyPathOrValue: String
    @Argument(help: "JSON, or a bare word taken as a string.") var value: String?

    /// The key path, or nil for the whole document.
    private var keyPath: String? { value == nil ? nil : keyPathOrValue }
    private var valueText: String { value ?? keyPathOrValue }

    func validate() throws {
        let value = try ValueArgument.parse(valueText)
        // Without KEYPATH only an object will do: `set OBJECT WORD` is likelier a forgotten VALUE.
        if keyPath == nil, case .object = value {} else if keyPath == nil {
            throw ValidationError("without KEYPATH, VALUE replaces the whole document and must be a JSON object")
        }
        if let ttl, !(ttl > 0 && ttl <= 31_536_000) {
            throw ValidationError("--ttl must be a number of seconds over 0 and at most 31536000 (a year)")
        }
    }

    func run() async throws {
        let operation = WriteOperation.set(
            object, keyPath, to: try ValueArgument.parse(valueText), ifModSeq: conditions.ifModSeq,
            ifValue: try conditions.parsedIfValue, ephemeral: ephemeral, ttl: ttl.map { .seconds($0) })
        let (object, keyPath) = (object, keyPath)
        // Taken before the set: a SIGTERM that comes as soon as the value is there still ends kvoctl with 0.
        let interrupt = hold ? InterruptSignal() : nil
        try await connection.run { connection throws(KVOClientError) in
            Output.line(String(try await connection.perform(operation)))
            if let interrupt { try await Hold.untilInterrupted(interrupt, connection, watching: object, keyPath) }
        }
    }
}
