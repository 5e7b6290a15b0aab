import ArgumentParser
import KVOClient

/// `kvoctl insert OBJECT KEYPATH VALUE… [--index I]`: prints the seq.
struct InsertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert",
        abstract: "Insert values into the array at a key path (created if missing); prints the seq.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path to an array.") var keyPath: String
    @Argument(help: "The values, each JSON or a bare word.") var values: [String]
    @Option(help: "Where the first value goes (default: append).") var index: Int?

    func validate() throws {
        guard !values.isEmpty else { throw ValidationError("give at least one VALUE") }
        if let index, index < 0 { throw ValidationError("--index must not be negative") }
        _ = try ValueArgument.parse(values)
    }

    func run() async throws {
        let values = try ValueArgument.parse(values)
        let (ifModSeq, ifValue) = (conditions.ifModSeq, try conditions.parsedIfValue)
        let seq = try await connection.run { connection throws(KVOClientError) in
            try await connection.insert(object, keyPath, values, at: index, ifModSeq: ifModSeq, ifValue: ifValue)
        }
        Output.line(String(seq))
    }
}
