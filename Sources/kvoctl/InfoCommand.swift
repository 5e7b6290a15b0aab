import ArgumentParser
import KVOClient
import KVOValues

/// `kvoctl info`: the daemon's counters as one JSON object.
struct InfoCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the daemon's version, uptime, connections, observations, objects, seq and epoch as JSON.",
        discussion: """
            kvod's reply as it sent it (seq, oldestSeq and epoch among its members), and "resume": the \
            epoch and seq as EPOCH:SEQ, the point from which observe --since misses no change after this info.
            Example: kvoctl observe person/1 name --since "$(kvoctl info | jq -r .resume)"
            """)

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let info = try await connection.run { connection throws(KVOClientError) in try await connection.info() }
        guard case .object(var members) = info.json else { return }
        members["resume"] = .string(info.resumePoint.description)
        Output.line(JSONValue.object(members).jsonString)
    }
}
