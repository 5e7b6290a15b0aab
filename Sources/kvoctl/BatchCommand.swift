import ArgumentParser
import KVOClient
import KVOEngine

/// `kvoctl batch`: change ops from standard input, one JSON object a line,
/// applied all or none; prints the seq of the batch's last change.
struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Apply the change ops on standard input (one JSON object a line) all or none; prints the seq.",
        discussion: """
            Each line is a set, delete, insert, remove or replace request as docs/PROTOCOL.md spells it, \
            with its conditions; blank lines are skipped. If any op fails, nothing is applied: the error \
            names the op's line (its index counts from 0), with status 5 for a failed condition.
            Example: printf '%s\\n' '{"op":"delete","object":"queue/pending"}' \
            '{"op":"set","object":"queue/running","keyPath":"job","value":1}' | kvoctl batch
            """)

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        var operations: [WriteOperation] = []
        while let line = readLine(strippingNewline: true) {
            if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
            do {
                operations.append(try WriteOperation(request: try JSONReader.parse(line)))
            } catch {
                throw ValidationError("op \(operations.count) (\(line)): \(error)")
            }
        }
        guard !operations.isEmpty else { throw ValidationError("no ops on standard input") }
        let result = try await connection.run { connection throws(KVOClientError) in
            do throws(KVOClientError) {
                return try await connection.batch(operations)
            } catch let error where error.index != nil {
                throw KVOClientError(error.code, "op \(error.index!): \(error.message)", modSeq: error.modSeq,
                                     index: error.index)
            }
        }
        Output.line(String(result.seq))
    }
}
