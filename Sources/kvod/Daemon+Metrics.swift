import Glibc
import KVOEngine

/// The `metrics` op's text: the daemon's figures (its connections' queues)
/// beside the engine's, rendered by ``DaemonMetrics``.
extension Daemon {
    func metricsText() -> String {
        var figures = DaemonMetrics.DaemonFigures(accepted: acceptedConnections, heapTrims: heapTrim?.count ?? 0,
                                                  receivedBytes: host.receivedBytes, sentBytes: host.sentBytes)
        figures.dataDirectoryBytes = configuration.dataDirectory.map(Self.databaseBytes)
        figures.cluster = engine.replicator?.info
        figures.backupHeldBytes = Int(clamping: backups?.held.bytes ?? 0)
        // One pass over the connections per scrape, none per request.
        for connection in connections.values {
            figures.queuedBytes += connection.pendingOutputBytes
            if connection.controller.isCongested { figures.congested += 1 }
            figures.heldEvents += connection.controller.heldEventCount
        }
        // Histograms kept as plain counts on the loop (LoopHistogram), after the registry's families.
        return metrics.render(engine: engine, daemon: figures) + host.requestDurations.text()
            + (cluster == nil ? "" : clusterCommitDurations.text())
    }

    /// kvod.db and its -wal file in `directory`, in bytes.
    private static func databaseBytes(in directory: String) -> Int {
        ["kvod.db", "kvod.db-wal"].reduce(0) { total, name in
            var status = stat()
            return total + (stat(directory + "/" + name, &status) == 0 ? Int(status.st_size) : 0)
        }
    }
}
