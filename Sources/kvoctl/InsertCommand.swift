import ArgumentParser
import KVOClient

/// `kvoctl insert OBJECT KEYPATH VALUE… [--index I]`: prints the seq.
struct InsertCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert",
        abstract: "Insert values into the array at a key path (created if missing); prints the seq.",
        discussion: """
            VALUEs as for set: JSON, a bare word, or verbatim strings with --string; with --json-file, \
            one value from the file and no VALUE arguments.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @OptionGroup var values: ValueOptions
    @OptionGroup var waiting: AwaitOptions
    @Option(help: "Where the first value goes (default: append).") var index: Int?
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "The object's name, a dotted key path to an array, and the values (none with --json-file).",
        valueName: "object keypath value"))
    var words: [String] = []

    /// The object, the key path, and the VALUE texts.
    private var parts: (object: String, keyPath: String, values: [String]) {
        get throws(ValidationError) {
            let words = try PositionalWords.values(words)
            if values.jsonFile != nil {
                guard words.count == 2 else { throw ValidationError("with --json-file, give OBJECT KEYPATH") }
            } else {
                guard words.count >= 3 else { throw ValidationError("give OBJECT KEYPATH and at least one VALUE") }
            }
            return (words[0], words[1], Array(words.dropFirst(2)))
        }
    }

    func validate() throws {
        if let index, index < 0 { throw ValidationError("--index must not be negative") }
        _ = try values.values(try parts.values)
    }

    func run() async throws {
        let (object, keyPath, texts) = try parts
        let values = try values.fileValue().map { [$0] } ?? values.values(texts)
        try await connection.perform(.insert(object, keyPath, values, at: index, ifModSeq: conditions.ifModSeq,
                                             ifValue: conditions.parsedIfValue), waiting)
    }
}
