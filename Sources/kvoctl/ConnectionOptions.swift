import ArgumentParser
import KVOClient

/// `--socket`, `--quiet` and `--request-timeout`, taken by every subcommand and by `kvoctl`
/// itself, so that both `kvoctl --socket X ping` and `kvoctl ping --socket X`
/// work; and the connection they lead to.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The kvod socket.",
        discussion: "Default: $KVOD_SOCKET, else kvod's default path, used only if it and its directory are yours.",
        valueName: "path"))
    var socket: String?
    @Flag(help: ArgumentHelp(
        "Print no warning and no reason for a failure on standard error (usage errors excepted); "
            + "the exit status says what happened."))
    var quiet = false
    @Option(help: ArgumentHelp(
        "How long to wait for each of kvod's replies before exiting 12 (default 30s).",
        discussion: "A duration: 500ms, 5s, 1.5m, 1h, or a bare number of seconds.",
        valueName: "duration"))
    var requestTimeout: DurationArgument?

    func validate() throws {
        if let requestTimeout, requestTimeout.milliseconds < 1 {
            throw ValidationError("--request-timeout must be at least 1ms, not \(requestTimeout)")
        }
    }

    /// Connects, runs `body`, and turns a ``KVOClientError`` into kvoctl's exit status.
    func run<T>(configure: (inout KVOConnection.Configuration) -> Void = { _ in },
                _ body: (KVOConnection) async throws(KVOClientError) -> T) async throws(CommandFailure) -> T {
        var configuration = KVOConnection.Configuration(socketPath: socket)
        if let requestTimeout { configuration.requestTimeout = requestTimeout.duration }
        configure(&configuration)
        do throws(KVOClientError) {
            let connection = try KVOConnection(configuration: configuration)
            defer { connection.close() }
            return try await body(connection)
        } catch {
            throw ExitStatus.failure(error)
        }
    }

    /// Connects and performs `operation`, printing and waiting as `waiting` says.
    func perform(_ operation: WriteOperation, _ waiting: AwaitOptions) async throws(CommandFailure) {
        try await run { connection throws(KVOClientError) in try await waiting.perform(operation, on: connection) }
    }

    /// Writes `text` on standard error unless `--quiet`: a note on a run that goes on.
    func note(_ text: String) {
        if !quiet { Output.error("kvoctl: " + text) }
    }
}

/// A command that takes ``ConnectionOptions``, so `main` knows whether it is `--quiet`.
protocol ConnectingCommand {
    var connection: ConnectionOptions { get }
}
