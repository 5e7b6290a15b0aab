import ArgumentParser
import KVOClient

/// `kvoctl set OBJECT KEYPATH VALUE`: prints the change's seq.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set the value at a key path; prints the change's seq.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The object's name, e.g. person/1.") var object: String
    @Argument(help: "A dotted key path, e.g. address.city.") var keyPath: String
    @Argument(help: "JSON, or a bare word taken as a string.") var value: String

    func validate() throws { _ = try ValueArgument.parse(value) }

    func run() async throws {
        let value = try ValueArgument.parse(value)
        let seq = try await connection.run { connection throws(KVOClientError) in
            try await connection.set(object, keyPath, to: value)
        }
        Output.line(String(seq))
    }
}
