import KVOCluster
import KVOEngine
import KVOStorage
import KVOValues
import Logging

/// Everything the daemon needs to start, read from the command line and the
/// environment by ``KVODCommand``.
struct DaemonConfiguration: Sendable {
    /// Where to listen.
    var socketPath: String
    /// `socketPath` is the default one (neither `--socket` nor
    /// `$KVOD_SOCKET`): its directory is created 0700 or must pass
    /// ``SocketDirectoryRule``, since someone else may have made it first.
    var socketPathIsDefault = false
    /// The socket file's permission bits (default 0660: owner and group).
    var socketMode: UInt32 = 0o660
    /// The longest request line accepted; longer ones get `too_large`.
    var maxLineBytes: Int = 1 << 20
    var logLevel: Logger.Level = .info
    /// How long SIGTERM waits for queued output to leave before closing anyway.
    var shutdownGraceMilliseconds: UInt64 = 2_000
    /// How often at most connections are summed up in one `info` line (``ConnectionLogSummary``).
    var connectionLogSeconds: UInt64 = 600
    /// The loop's CPU per turn over which the turn is logged (``SlowTurnLog``).
    var slowTurnMicroseconds = SlowTurnLog.defaultThresholdMicroseconds
    /// A listening socket passed by systemd; kvod serves it instead of
    /// binding `socketPath`.
    var activatedSocket: ActivatedSocket?
    /// Where to report readiness, status, watchdog pings and stopping; nil
    /// when no service manager listens.
    var notifyTarget: SystemdNotifier.Target?
    /// Under systemd (`$INVOCATION_ID` set) SIGHUP is logged and ignored:
    /// kvod has nothing to reload, and a stray `systemctl kill -s HUP` must
    /// not stop the service (systemd does not restart after SIGHUP). In a
    /// terminal, hanging up ends kvod as it ends any foreground program.
    var ignoresHangUp = false
    /// Where state is kept (`--data-dir`); nil keeps it in memory only.
    var dataDirectory: String?
    /// A backup to make `dataDirectory` from before opening it (`--restore`).
    var restoreFile: String?
    /// When commits are synced to the disk (`--sync`).
    var syncMode: SyncMode = .always
    /// The space kept in the data directory's reserve file, and the least
    /// free space writes that add data need (`--storage-reserve`; 0: none).
    var storageReserveBytes = 8 << 20
    /// How many recent changes are kept for `observe` with `since` (`--history`).
    var historyCapacity: Int = 100_000
    /// How many bytes of recent changes are kept (`--history-bytes`).
    var historyBytes: Int = HistoryLimits.defaultMaxBytes
    /// The most observations one connection may hold (`--max-observations-per-connection`).
    var maxObservationsPerConnection = EngineConfiguration.defaultMaxObservationsPerClient
    /// The most bytes the engine's memory account may reach through growth
    /// (`--max-memory`); 0: no limit.
    var maxMemory = 0
    /// How much output may wait for one client (see ``OutputLimits``).
    var outputLimits = OutputLimits()
    /// How much may wait for all clients together (`--max-client-memory`,
    /// see ``ClientMemoryBudget``); 0: no budget.
    var maxClientMemory = 0
    /// The most clients served at once; more are refused with `limit_exceeded`.
    /// nil: what the open-file limit leaves (``DescriptorLimit``).
    var maxConnections: Int?
    /// The most clients of one uid served at once (root and kvod's own uid
    /// aside); more are refused with `limit_exceeded`. nil: half of the
    /// connections (``ConnectionsPerUID/defaultLimit(maxConnections:)``).
    var maxConnectionsPerUID: Int?
    /// The pause after a fan-out flush (see ``FanOutPacing``); 0: none.
    var fanOutPauseMicroseconds: UInt32 = FanOutPacing.defaultPauseMicroseconds
    /// Who may read and write what (`--policy`); nil: everyone may everything.
    var accessPolicy: AccessPolicy?
    /// etcd members to run over (`--etcd`); empty: local mode.
    var etcdEndpoints: [String] = []
    /// Where kvod's keys lie in etcd (`--etcd-prefix`).
    var etcdPrefix = "/kvod/"
    /// The cluster's request limits (`--etcd-max-request-bytes`, `--etcd-max-txn-ops`).
    var etcdLimits = EtcdLimits()
    /// Seconds an owning connection's etcd lease lives unrenewed (`--etcd-lease-ttl`).
    var etcdLeaseTTL: Int64 = 10
    /// Bytes of watch changes waiting for their slices before the watch is paused (`--etcd-watch-buffer`).
    var etcdWatchBufferBytes = EtcdReplica.defaultWatchBufferBytes
    /// Where HTTP is served (`--http`), if anywhere.
    var httpEndpoint: HTTPEndpoint?
    /// Who each `--http-tokens` token acts as; nil: no token is valid.
    var httpTokens: HTTPTokens?
    /// Where they were read from, read again on SIGHUP.
    var httpTokensFile: (path: String, allowRoot: Bool)?
    /// `--http-cert` and `--http-key`: HTTP over TLS.
    var httpTLS: (certificateFile: String, keyFile: String)?
    /// How long an HTTP request may take to arrive (`--http-request-timeout`).
    var httpRequestTimeoutMilliseconds: UInt64 = 10_000
    /// The web origin whose pages may call the API (`--http-cors-origin`).
    var httpCORSOrigin: String?
    /// `/metrics` without a token (`--http-metrics-open`).
    var httpMetricsOpen = false
    /// How many etcd revisions back a starting kvod reads the changes (`--etcd-history-revisions`).
    var etcdHistoryRevisions = defaultEtcdHistoryRevisions
    /// `--etcd-history-revisions`' default: about 5 s of start here (docs/CLUSTER.md).
    static let defaultEtcdHistoryRevisions = 10_000
}
