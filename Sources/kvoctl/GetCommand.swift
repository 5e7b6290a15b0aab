import ArgumentParser
import KVOClient

/// `kvoctl get OBJECT [KEYPATH]`: prints the value as compact JSON.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the value at a key path (or the whole object) as JSON.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path; omit for the whole object.") var keyPath: String?

    func run() async throws {
        let value = try await connection.run { connection throws(KVOClientError) in
            try await connection.get(object, keyPath)
        }
        Output.line(value.jsonString)
    }
}
