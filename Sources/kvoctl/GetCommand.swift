import ArgumentParser
import KVOClient

/// `kvoctl get OBJECT [KEYPATH] [--mod-seq]`: prints the value as compact JSON.
struct GetCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the value at a key path (or the whole object) as JSON.",
        discussion: """
            With --mod-seq the line is the value's modSeq, a space, then the value, so a script reads both \
            with `read -r modseq value`: the modSeq to give to a write's --if-mod-seq.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path; omit for the whole object.") var keyPath: String?
    @Flag(help: "Print the value's modSeq and a space before the value.") var modSeq = false

    func run() async throws {
        let versioned = try await connection.run { connection throws(KVOClientError) in
            try await connection.getVersioned(object, keyPath)
        }
        Output.line(modSeq ? "\(versioned.modSeq) \(versioned.value.jsonString)" : versioned.value.jsonString)
    }
}
