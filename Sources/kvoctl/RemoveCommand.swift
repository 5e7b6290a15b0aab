import ArgumentParser
import KVOClient

/// `kvoctl remove OBJECT KEYPATH INDEX…`: prints the seq.
struct RemoveCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove elements from the array at a key path; prints the seq.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @OptionGroup var waiting: AwaitOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path to an array.") var keyPath: String
    @Argument(help: "Positions in the array as it is before the change.") var indexes: [Int]

    func validate() throws {
        guard !indexes.isEmpty else { throw ValidationError("give at least one INDEX") }
        guard indexes.allSatisfy({ $0 >= 0 }) else { throw ValidationError("indexes must not be negative") }
    }

    func run() async throws {
        try await connection.perform(.remove(object, keyPath, at: indexes, ifModSeq: conditions.ifModSeq,
                                             ifValue: conditions.parsedIfValue), waiting)
    }
}
