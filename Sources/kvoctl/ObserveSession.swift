import KVOClient
import KVOValues

/// One run of `kvoctl observe`, from its options: events printed until the
/// count, the timeout or a failure; the resume file kept after each one; and
/// `--resync` when kvod cannot replay. Sendable, for the printing task.
struct ObserveSession: Sendable {
    /// The prefix observed, or nil for ``object``.
    var prefix: String?
    var object: String
    /// None: whole documents.
    var keyPaths: [String]
    var options: ObservationOptions
    /// `--distinct`, `--kinds`, `--throttle`: what kvod sends.
    var delivery: DeliveryOptions
    var count: Int?
    var timeout: DurationArgument?
    var printResume: Bool
    /// `--raw`: each event's new value alone (``JSONValue/rawText``), `null` when it carries none.
    var raw: Bool
    var resync: Bool
    var file: ResumeFile?
    /// For its `--quiet`: no note on standard error.
    var connectionOptions: ConnectionOptions

    enum Outcome: Sendable {
        case counted, ended
        case timedOut(printed: Int)
        case failed(CommandFailure)
    }

    /// Prints events from `start` (nil: from now) until the count is reached,
    /// the time is up, or the stream fails. Throws only a failure of the
    /// `info` that dates a new resume file.
    func watch(_ connection: KVOConnection, from start: ResumePoint?) async throws(KVOClientError) -> Outcome {
        var from = start
        if let file, from == nil {
            // Written before any event, so that a run stopped before its first event still resumes from here.
            let now = try await connection.info().resumePoint
            do throws(CommandFailure) { try file.write(now) } catch { return .failed(error) }
            from = now
        }
        let start = from
        let printed = Tally()
        return await withTaskGroup(of: Outcome.self) { group in
            group.addTask { await printEvents(connection, from: start, counting: printed) }
            if let timeout {
                group.addTask {
                    try? await Task.sleep(for: timeout.duration)
                    return .timedOut(printed: printed.value)
                }
            }
            let first = await group.next() ?? .ended
            group.cancelAll()
            return first
        }
    }

    /// The stream of what the arguments name: an object's or a prefix's key paths, or whole documents.
    private func changes(_ connection: KVOConnection, options: ObservationOptions, since: ResumePoint?) -> ChangeStream {
        if let prefix {
            return keyPaths.isEmpty
                ? connection.changes(prefix: prefix, options: options, delivery: delivery, since: since)
                : connection.changes(prefix: prefix, keyPaths: keyPaths, options: options, delivery: delivery,
                                     since: since)
        }
        return keyPaths.isEmpty
            ? connection.changes(of: object, options: options, delivery: delivery, since: since)
            : connection.changes(of: object, keyPaths: keyPaths, options: options, delivery: delivery, since: since)
    }

    private func printEvents(_ connection: KVOConnection, from start: ResumePoint?, counting printed: Tally)
        async -> Outcome
    {
        var stream = changes(connection, options: options, since: start)
        while true {
            do throws(KVOClientError) {
                var events = stream.makeAsyncIterator()
                while let change = try await events.next() {
                    Output.line(raw ? (change.new ?? .null).rawText : ChangeLine.json(change, resume: printResume))
                    printed.add()
                    if let file, let point = change.resumePoint {
                        do throws(CommandFailure) { try file.write(point) } catch { return .failed(error) }
                    }
                    // Printed (and flushed): acknowledged now, so that a run that ends here has acked it.
                    if delivery.acknowledges { try await events.acknowledge() }
                    if let count, printed.value >= count { return .counted }
                }
                return .ended
            } catch where error.code == .compacted && resync {
                connectionOptions.note("\(error.code): \(error.message); printing the current values (--resync)")
                stream = changes(connection, options: options.union(.initial), since: nil)
            } catch where error.code == .compacted {
                let advice = file.map { "remove \($0.path) to start from now, or" } ?? "observe without --since, or"
                let failure = ExitStatus.failure(error)
                return .failed(CommandFailure(failure.status, failure.reason + "; \(advice) add --resync"))
            } catch {
                return .failed(ExitStatus.failure(error))
            }
        }
    }
}
