import ArgumentParser
import KVOClient

/// `--socket`, shared by every subcommand, and the connection it leads to.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The kvod socket.",
        discussion: "Default: $KVOD_SOCKET, else kvod's default path, used only if it and its directory are yours.",
        valueName: "path"))
    var socket: String?

    /// Connects, runs `body`, and turns a ``KVOClientError`` into kvoctl's exit status.
    func run<T>(configure: (inout KVOConnection.Configuration) -> Void = { _ in },
                _ body: (KVOConnection) async throws(KVOClientError) -> T) async throws -> T {
        var configuration = KVOConnection.Configuration(socketPath: socket)
        configure(&configuration)
        do throws(KVOClientError) {
            let connection = try KVOConnection(configuration: configuration)
            defer { connection.close() }
            return try await body(connection)
        } catch {
            throw ExitStatus.report(error)
        }
    }
}
