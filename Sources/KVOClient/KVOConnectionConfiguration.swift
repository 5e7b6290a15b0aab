import Foundation
import KVOValues

extension KVOConnection {
    /// How to reach kvod, how long to wait for it, and what to do when the connection breaks.
    public struct Configuration: Sendable {
        /// The daemon's socket; see ``KVOConnection/defaultSocketPath(environment:)``.
        public var socketPath: String
        /// Before connecting, check that the socket and its directory belong
        /// to whom they should (this user; root or `kvod` for the system
        /// socket) and that nobody else may write in the directory, and refuse
        /// to connect otherwise (`cannot_connect`): someone else could have made
        /// a default directory such as `/tmp/kvod-<uid>` first. On when the
        /// path is the default one; off when it was chosen (a `socketPath`
        /// given, or `$KVOD_SOCKET`).
        public var checksSocketOwnership: Bool
        /// Off by default: a broken connection ends every stream and callback
        /// with `KVOClientError.Code.connectionLost`.
        public var reconnect: ReconnectPolicy
        /// How long a request waits for its reply (default 30 s; nil: without end).
        ///
        /// When it passes, the request throws `KVOClientError.Code.timedOut`
        /// and the connection stays open and usable: a request already sent
        /// may or may not have been applied (kvod's late reply is dropped), and
        /// one not yet sent because the connection is reconnecting is withdrawn
        /// and never sent. A stuck kvod is not given up on: streams and
        /// controllers wait on; ``KVOConnection/close()`` ends them. Covers the
        /// requests of the async API and ``KVOConnection/sendRaw(_:onReply:)``,
        /// not the registrations behind streams and controllers.
        public var requestTimeout: Duration?
        /// Receives, on the reader thread, every event no observation of this
        /// connection asked for (as the line kvod sent), e.g. the events of
        /// an `observe` sent with ``KVOConnection/sendRaw(_:onReply:)``. Must not block.
        public var onUnroutedEvent: (@Sendable (String) -> Void)?
        /// How many bytes of changes KVOClient holds for one subscriber (a
        /// stream, or one observation of a ``KVOController``) that has not
        /// taken them yet (default 2 MiB). Past it, that subscriber's waiting
        /// changes are folded as kvod folds a slow reader's: only the latest
        /// change per key path stays, with ``Change/coalesced`` counting the
        /// ones it stands for, prior changes are dropped. So a slow subscriber
        /// gets the current values and learns what it missed, while memory stays
        /// bounded and other subscribers and replies keep flowing.
        public var subscriberBufferLimit: Int

        /// `socketPath` nil: the default path (``KVOConnection/defaultSocketPath(environment:)``),
        /// with ``checksSocketOwnership`` on unless `$KVOD_SOCKET` chose it.
        public init(socketPath: String? = nil, reconnect: ReconnectPolicy = .never,
                    requestTimeout: Duration? = defaultRequestTimeout,
                    onUnroutedEvent: (@Sendable (String) -> Void)? = nil,
                    subscriberBufferLimit: Int = defaultSubscriberBufferLimit) {
            self.socketPath = socketPath ?? KVOConnection.defaultSocketPath()
            checksSocketOwnership = socketPath == nil
                && !DefaultSocketPath.isChosen(environment: ProcessInfo.processInfo.environment)
            self.reconnect = reconnect
            self.requestTimeout = requestTimeout
            self.onUnroutedEvent = onUnroutedEvent
            self.subscriberBufferLimit = subscriberBufferLimit
        }

        /// 30 seconds: far beyond any answer of a healthy kvod (its replies
        /// take microseconds; a `--sync always` commit, milliseconds), and short
        /// enough that a stuck daemon surfaces as an error, not a hang.
        public static let defaultRequestTimeout: Duration = .seconds(30)

        /// 2 MiB: several thousand small changes; a slow subscriber then keeps a
        /// process that reads 300,000 changes a second near 32 MB (docs/PERFORMANCE.md).
        public static let defaultSubscriberBufferLimit = 2 << 20
    }

    /// Whether and how a connection reconnects after it breaks.
    ///
    /// When it reconnects, every observation is registered again, resuming
    /// from the last change it delivered, so streams and controllers go on
    /// and get the changes made meanwhile, each once; where kvod cannot replay
    /// them, the observation ends with `compacted`. Over etcd, a kvod still
    /// catching up that has not applied what an observation resumes from
    /// answers `unavailable`: the connection then goes and comes back after
    /// ``maximumDelay``, until that kvod has caught up. Requests in flight when
    /// it broke fail with `connectionLost` (they may or may not have been
    /// applied); requests made while it is reconnecting wait, at most their
    /// ``Configuration/requestTimeout``, and are sent once it is back.
    public struct ReconnectPolicy: Sendable, Equatable {
        /// Whether to reconnect at all.
        public var isEnabled: Bool
        /// The wait before the second attempt (the first is immediate); it doubles up to ``maximumDelay``.
        public var initialDelay: Duration
        /// The longest wait between two attempts.
        public var maximumDelay: Duration
        /// Give up after this many failed attempts in a row (nil: never give up);
        /// then everything fails with `connectionLost`.
        public var maximumAttempts: Int?

        /// Never reconnect (the default).
        public static let never = ReconnectPolicy(isEnabled: false, initialDelay: .zero, maximumDelay: .zero,
                                                  maximumAttempts: 0)

        /// Reconnect with exponential backoff.
        public static func retry(initialDelay: Duration = .milliseconds(50), maximumDelay: Duration = .seconds(2),
                                 maximumAttempts: Int? = nil) -> ReconnectPolicy {
            ReconnectPolicy(isEnabled: true, initialDelay: initialDelay, maximumDelay: maximumDelay,
                            maximumAttempts: maximumAttempts)
        }
    }

    /// The socket a client uses when none is given: `$KVOD_SOCKET`; else the
    /// daemon's default (`/run/kvod/kvod.sock` for root,
    /// `$XDG_RUNTIME_DIR/kvod.sock`, or `/tmp/kvod-<uid>/kvod.sock`); and if
    /// that per-user socket does not exist but the system service's
    /// `/run/kvod/kvod.sock` does, that one.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        DefaultSocketPath.resolveForClient(environment: environment) { FileManager.default.fileExists(atPath: $0) }
    }
}
