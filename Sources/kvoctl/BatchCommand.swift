import ArgumentParser
import KVOClient
import KVOValues

/// `kvoctl batch`: change ops from standard input, one JSON object a line,
/// applied all or none; prints the seq of the batch's last change.
struct BatchCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Apply the change ops on standard input (one JSON object a line) all or none; prints the seq.",
        discussion: """
            Each line is a set, delete, insert, remove, replace or add request as docs/PROTOCOL.md spells it, \
            with its conditions; blank lines are skipped. A line that is not such an op is a usage error \
            (status 2, nothing sent). If any op fails, nothing is applied: kvod's error names it as ops[i], \
            counting from 0, with status 5 for a failed condition. After the seq, each add's sum is printed \
            on a line of its own, in the order of the adds.
            Example: printf '%s\\n' '{"op":"delete","object":"queue/pending"}' \
            '{"op":"set","object":"queue/running","keyPath":"job","value":1}' | kvoctl batch
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: AwaitOptions

    func run() async throws {
        var operations: [WriteOperation] = []
        while let line = readLine(strippingNewline: true) {
            if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
            do throws(KVOClientError) {
                let request: JSONValue
                do { request = try JSONReader.parse(line) } catch {
                    throw KVOClientError(.badJSON, error.message)
                }
                operations.append(try WriteOperation(request: request))
            } catch {
                throw CommandFailure.usage("line \(operations.count + 1) (\(line)): \(error.message)")
            }
        }
        guard !operations.isEmpty else { throw CommandFailure.usage("no ops on standard input") }
        // kvod's error names the failing op (`ops[i]: …`), counting from 0.
        try await connection.run { connection throws(KVOClientError) in
            try await waiting.batch(operations, on: connection)
        }
    }
}
