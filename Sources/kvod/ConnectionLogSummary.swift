import Logging

/// How connections reach the log without filling it: each one at `debug`;
/// at `info`, the first after a quiet interval as it comes, then at most one
/// line per interval counting the others, so that a client that connects
/// every few seconds (a metrics scraper) does not fill the journal
/// (docs/OPERATIONS.md, "Logs"). Loop-confined.
final class ConnectionLogSummary {
    private let logger: Logger
    private let timer: UVTimer
    private let intervalMilliseconds: UInt64
    /// Connections logged at `debug` only since the last `info` line.
    private var unreported = 0
    /// Whether an interval is open: a connection now is counted, not logged at `info`.
    private var isCounting = false
    /// The connections open now, read when the summary is written.
    private let openConnections: () -> Int

    init(loop: UVLoop, logger: Logger, intervalSeconds: UInt64, openConnections: @escaping () -> Int) {
        self.logger = logger
        self.openConnections = openConnections
        intervalMilliseconds = max(intervalSeconds, 1) * 1_000
        timer = UVTimer(loop: loop)
    }

    /// Logs a client's connection, described by `line`.
    func connected(_ line: @autoclosure () -> String) {
        guard !isCounting else {
            unreported += 1
            return logger.debug("\(line())")
        }
        logger.info("\(line())")
        startInterval()
    }

    private func startInterval() {
        isCounting = true
        timer.start(afterMilliseconds: intervalMilliseconds) { [unowned self] in
            self.intervalEnded()
        }
    }

    private func intervalEnded() {
        isCounting = false
        guard unreported > 0 else { return }
        let seconds = intervalMilliseconds / 1_000
        logger.info("""
            \(unreported) more client(s) connected in the last \(seconds) s (\(openConnections()) connected now; \
            each one is logged at debug)
            """)
        unreported = 0
        startInterval()
    }

    /// Closes its timer (at shutdown), so the loop can end.
    func close() {
        timer.close()
    }
}
