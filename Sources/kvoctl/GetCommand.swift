import ArgumentParser
import KVOClient
import KVOValues

/// `kvoctl get OBJECT [KEYPATH] [--mod-seq] [--raw]`: prints the value as compact JSON
/// (with `--raw`, a string as its bare text).
struct GetCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the value at a key path (or the whole object) as JSON.",
        discussion: """
            With --mod-seq the line is the value's modSeq, a space, then the value, so a script reads both \
            with `read -r modseq value`: the modSeq to give to a write's --if-mod-seq.
            With --raw a string is printed as its text, without quotes or escapes (name=$(kvoctl get --raw \
            app/cfg name) gives web1, not "web1"); any other value (number, true, null, array, object) is \
            printed as JSON, as without --raw. A string that holds a newline then spans several lines.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path; omit for the whole object.") var keyPath: String?
    @Flag(help: "Print the value's modSeq and a space before the value.") var modSeq = false
    @Flag(help: "Print a string without quotes or escapes (other values as JSON).") var raw = false

    func run() async throws {
        let versioned = try await connection.run { connection throws(KVOClientError) in
            try await connection.getVersioned(object, keyPath)
        }
        let text = raw ? versioned.value.rawText : versioned.value.jsonString
        Output.line(modSeq ? "\(versioned.modSeq) \(text)" : text)
    }
}
