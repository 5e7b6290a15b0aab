import ArgumentParser
import KVOClient

/// `kvoctl delete OBJECT [KEYPATH]`: prints the seq.
struct DeleteCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete the value at a key path, or the whole object; prints the seq.",
        discussion: "Deleting what is not there succeeds and changes nothing.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @OptionGroup var waiting: AwaitOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path; omit to delete the whole object.") var keyPath: String?

    func run() async throws {
        try await connection.perform(.delete(object, keyPath, ifModSeq: conditions.ifModSeq,
                                             ifValue: conditions.parsedIfValue), waiting)
    }
}
