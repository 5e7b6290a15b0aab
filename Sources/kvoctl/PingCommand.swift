import ArgumentParser
import KVOClient

/// `kvoctl ping`: prints `ok` when the daemon answers.
struct PingCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping", abstract: "Check that kvod answers; prints ok.")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await connection.run { connection throws(KVOClientError) in try await connection.ping() }
        Output.line("ok")
    }
}
