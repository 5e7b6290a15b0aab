import KVOEngine

/// The `metrics` op's text: the daemon's figures (its connections' queues)
/// beside the engine's, rendered by ``DaemonMetrics``.
extension Daemon {
    func metricsText() -> String {
        var figures = DaemonMetrics.DaemonFigures(accepted: acceptedConnections, heapTrims: heapTrim?.count ?? 0)
        // One pass over the connections per scrape, none per request.
        for connection in connections.values {
            figures.queuedBytes += connection.pendingOutputBytes
            if connection.controller.isCongested { figures.congested += 1 }
            figures.heldEvents += connection.controller.heldEventCount
        }
        return metrics.render(engine: engine, daemon: figures)
    }
}
