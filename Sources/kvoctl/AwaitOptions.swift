import ArgumentParser
import KVOClient
import KVOProtocol
import KVOValues

/// `--await written|acknowledged` and `--timeout D`, shared by the write
/// commands (docs/PROTOCOL.md, "Acknowledgements and `await`"): the change
/// applies at once; kvoctl returns once its observers were written to, or
/// acknowledged it (`kvoctl observe --ack`), and prints
/// `{"seq":S,"observers":N,"acknowledged":M}` instead of the bare seq. A
/// timeout prints the same line and exits 7: the change is applied.
struct AwaitOptions: ParsableArguments {
    enum Condition: String, ExpressibleByArgument, CaseIterable {
        case written, acknowledged
    }

    @Option(name: .customLong("await"), help: ArgumentHelp(
        "Return once the change's events were written to its observers, or once every observer that "
            + "acknowledges (kvoctl observe --ack) has acknowledged it; print the counts.",
        valueName: "written|acknowledged"))
    var condition: Condition?
    @Option(help: ArgumentHelp("With --await: wait at most this long (1ms to 1h; default 5s).",
                               valueName: "duration"))
    var timeout: DurationArgument?

    func validate() throws {
        if timeout != nil && condition == nil { throw ValidationError("--timeout goes with --await") }
        try timeout?.check("--timeout", upTo: 3_600_000, "1h (3600000 ms, kvod's await timeout limit)")
    }

    /// What the options ask kvod to wait for; nil without `--await`.
    var awaitCondition: AwaitCondition? {
        let wait = timeout?.duration ?? AwaitCondition.defaultTimeout
        return switch condition {
        case .written: .written(timeout: wait)
        case .acknowledged: .acknowledged(timeout: wait)
        case nil: nil
        }
    }

    /// Performs `operation` and prints its seq, or with `--await` the counts
    /// line (also on a timeout, which then throws with status 7).
    func perform(_ operation: WriteOperation, on connection: KVOConnection) async throws(KVOClientError) {
        guard let awaitCondition else {
            Output.line(String(try await connection.perform(operation)))
            return
        }
        try await printCounts { () throws(KVOClientError) in
            try await connection.perform(operation, await: awaitCondition)
        }
    }

    /// Like ``perform(_:on:)``, for a batch.
    func batch(_ operations: [WriteOperation], on connection: KVOConnection) async throws(KVOClientError) {
        guard let awaitCondition else {
            let result = try await connection.batch(operations)
            Output.line(String(result.seq))
            // Then each add's sum, in the order of the adds (what incr prints for one).
            for sum in result.sums.compactMap({ $0 }) { Output.line(String(sum)) }
            return
        }
        try await printCounts { () throws(KVOClientError) in
            try await connection.batch(operations, await: awaitCondition)
        }
    }

    private func printCounts(_ write: () async throws(KVOClientError) -> AwaitedWrite) async throws(KVOClientError) {
        do {
            let result = try await write()
            Output.line(Self.counts(seq: result.seq, observers: result.observers, acknowledged: result.acknowledged))
        } catch where error.code == .timeout {
            if let seq = error.seq, let observers = error.observers, let acknowledged = error.acknowledged {
                Output.line(Self.counts(seq: seq, observers: observers, acknowledged: acknowledged))
            }
            throw error
        }
    }

    private static func counts(seq: UInt64, observers: Int, acknowledged: Int) -> String {
        var counts = JSONObject()
        counts[Field.seq.rawValue] = .number(JSONNumber(validatedLiteral: String(seq)))
        counts[Field.observers.rawValue] = .number(JSONNumber(observers))
        counts[Field.acknowledged.rawValue] = .number(JSONNumber(acknowledged))
        return JSONValue.object(counts).jsonString
    }
}
