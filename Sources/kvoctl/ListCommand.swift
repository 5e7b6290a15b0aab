import ArgumentParser
import KVOClient

/// `kvoctl list [PREFIX]`: the names of the existing objects under PREFIX, one a line.
struct ListCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print the names of the objects whose name starts with PREFIX, one a line.",
        discussion: """
            Ascending by UTF-8 bytes; all of them (kvoctl pages through kvod). Without PREFIX, every object.
            Example: kvoctl list services/
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The prefix, e.g. services/; omit for every object.") var prefix: String = ""

    func run() async throws {
        let prefix = prefix
        let names = try await connection.run { connection throws(KVOClientError) in
            try await connection.list(prefix: prefix)
        }
        for name in names { Output.line(name) }
    }
}
