import ArgumentParser
import Foundation
import KVOClient

/// `kvoctl metrics`: the daemon's metrics as Prometheus text, verbatim.
struct MetricsCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the daemon's metrics in Prometheus's text format.",
        discussion: """
            kvod's text as it rendered it, nothing added: ready for node_exporter's textfile collector. \
            Write it to a temporary file and rename it into the collector's directory, so that the \
            collector never reads half a file (docs/OPERATIONS.md has a systemd timer that does).
            Example (Debian's directory): cd /var/lib/prometheus/node-exporter && kvoctl metrics > kvod.prom.$$ && mv kvod.prom.$$ kvod.prom
            """)

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let text = try await connection.run { connection throws(KVOClientError) in try await connection.metrics() }
        // Verbatim: the text ends with its own newline.
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
