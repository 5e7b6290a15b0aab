import ArgumentParser
import KVOClient

/// `kvoctl info`: the daemon's counters as one JSON object.
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the daemon's version, uptime, connections, observations, objects and seq as JSON.")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let info = try await connection.run { connection throws(KVOClientError) in try await connection.info() }
        Output.line(info.json.jsonString)
    }
}
