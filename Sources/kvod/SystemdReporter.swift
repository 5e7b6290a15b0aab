import Logging

/// Tells systemd how kvod is doing, through a ``SystemdNotifier``.
/// Loop-confined: its timers run on the daemon's loop.
///
/// - `READY=1` once clients can connect (the socket listens).
/// - `STATUS=` a line a person reads in `systemctl status`, checked once a
///   second and sent only when it changed.
/// - `WATCHDOG=1` every half `$WATCHDOG_USEC`, from a timer on the event loop
///   itself: a loop that hangs stops pinging, and systemd (`WatchdogSec=`)
///   kills and restarts kvod.
/// - `STOPPING=1` when shutdown begins. The watchdog keeps pinging while the
///   connections drain, since the loop is still alive.
final class SystemdReporter {
    static let statusRefreshMilliseconds: UInt64 = 1_000

    private let notifier: SystemdNotifier
    private let loop: UVLoop
    private let logger: Logger
    private let status: () -> String
    private var lastStatus: String?
    private var statusTimer: UVTimer?
    private var watchdogTimer: UVTimer?
    private var sendHasFailed = false

    /// `status` renders the current `STATUS=` text.
    init(notifier: SystemdNotifier, loop: UVLoop, logger: Logger, status: @escaping () -> String) {
        self.notifier = notifier
        self.loop = loop
        self.logger = logger
        self.status = status
    }

    /// Half of `$WATCHDOG_USEC` in milliseconds (at least 1), as
    /// `sd_watchdog_enabled(3)` advises; nil without a watchdog.
    var watchdogPingMilliseconds: UInt64? {
        notifier.target.watchdogMicroseconds.map { max($0 / 2 / 1_000, 1) }
    }

    /// Sends `READY=1` with the first status, then starts the status and
    /// watchdog timers.
    func ready() {
        let text = status()
        lastStatus = text
        send(["READY=1", "STATUS=\(text)"])
        let statusTimer = UVTimer(loop: loop)
        statusTimer.start(afterMilliseconds: Self.statusRefreshMilliseconds,
                          repeatMilliseconds: Self.statusRefreshMilliseconds) { [unowned self] in self.refreshStatus() }
        self.statusTimer = statusTimer
        if let period = watchdogPingMilliseconds {
            let watchdogTimer = UVTimer(loop: loop)
            watchdogTimer.start(afterMilliseconds: period, repeatMilliseconds: period) { [unowned self] in
                self.send(["WATCHDOG=1"])
            }
            self.watchdogTimer = watchdogTimer
            logger.debug("systemd watchdog: pinging every \(period) ms")
        }
    }

    /// Sends `STOPPING=1` and a last status; no more status updates follow.
    func stopping(status text: String) {
        statusTimer?.close()
        statusTimer = nil
        send(["STOPPING=1", "STATUS=\(text)"])
    }

    /// Stops the timers; part of the daemon's final shutdown.
    func close() {
        statusTimer?.close()
        statusTimer = nil
        watchdogTimer?.close()
        watchdogTimer = nil
    }

    private func refreshStatus() {
        let text = status()
        guard text != lastStatus else { return }
        lastStatus = text
        send(["STATUS=\(text)"])
    }

    /// A failed send is logged once as a warning (systemd gone, socket full),
    /// later ones at debug level: the next one may well succeed.
    private func send(_ assignments: [String]) {
        do {
            try notifier.send(assignments)
        } catch {
            let message: Logger.Message = "cannot notify systemd (\(assignments.first ?? "")): \(error)"
            if sendHasFailed { logger.debug(message) } else { logger.warning(message) }
            sendHasFailed = true
        }
    }
}
