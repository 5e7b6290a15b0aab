import ArgumentParser
import KVOClient
import KVOProtocol
import KVOValues

/// `kvoctl raw`: protocol lines from standard input, kvod's lines to standard output.
struct RawCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "raw",
        abstract: "Send protocol lines from standard input; print kvod's replies and events.",
        discussion: """
            Each input line is one request (docs/PROTOCOL.md); lines are pipelined, and what kvod sends \
            is printed in the order it came. Exits once input ends and every reply has arrived: \
            status 0, or 1 when any reply was an error.
            Example: echo '{"op":"get","object":"person/1"}' | kvoctl raw
            """)

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let (refusals, replies) = (Tally(), Tally())
        try await connection.run(configure: { $0.onUnroutedEvent = { Output.line($0) } }) {
            connection throws(KVOClientError) in
            while let line = readLine(strippingNewline: true) {
                connection.sendRaw(line) { result in
                    // A failure means the connection broke: the ping below reports it.
                    guard case .success(let reply) = result else { return }
                    Output.line(reply)
                    replies.add()
                    if Self.isErrorReply(reply) { refusals.add() }
                }
            }
            // Replies come in order: once this one is back, every line's reply has been printed.
            try await connection.ping()
        }
        if refusals.value > 0 {
            throw CommandFailure(ExitStatus.daemonError, "\(refusals.value) of \(replies.value) replies were errors")
        }
    }

    private static func isErrorReply(_ reply: String) -> Bool {
        let parsed = try? JSONReader.parse(reply, maxDepth: DocumentDepth.readerLimit)
        guard case .object(let members)? = parsed else { return false }
        return members[Field.ok.rawValue] == .bool(false)
    }
}
