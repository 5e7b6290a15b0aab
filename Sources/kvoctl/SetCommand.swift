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
            """)

    @OptionGroup var connection: ConnectionOptions
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
    }

    func run() async throws {
        let value = try ValueArgument.parse(valueText)
        let keyPath = keyPath
        let seq = try await connection.run { connection throws(KVOClientError) in
            if let keyPath { try await connection.set(object, keyPath, to: value) }
            else { try await connection.setDocument(object, to: value) }
        }
        Output.line(String(seq))
    }
}
