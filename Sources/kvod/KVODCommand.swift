import ArgumentParser
import Foundation
import KVOBuildInfo
import KVOCluster
import KVODCore
import KVOEngine
import KVOStorage
import KVOValues
import Logging

/// `kvod`: the change-notification daemon.
@main
struct KVODCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvod",
        abstract: "Key-Value Observing over a Unix socket: set values, observe key paths, hear every change.",
        discussion: "The wire protocol is line-delimited JSON; see docs/PROTOCOL.md.\n\n" + EnvironmentOptions.helpText,
        version: BuildInfo.description)

    @Option(help: ArgumentHelp(
        "The Unix socket to listen on.",
        discussion: "Default: $KVOD_SOCKET; else /run/kvod/kvod.sock for root; else $XDG_RUNTIME_DIR/kvod.sock; else /tmp/kvod-<uid>/kvod.sock."))
    var socket: String?

    @Option(help: ArgumentHelp(
        "The socket file's mode, in octal.",
        discussion: "Whoever may open the socket may read and write every object, unless --policy restricts it."))
    var socketMode: String = "0660"

    @Option(help: "The longest request line accepted, in bytes; longer lines get too_large.")
    var maxLineBytes: Int = 1 << 20

    @Option(help: ArgumentHelp(
        "Keep state in this directory (created if missing) and restore it at start.",
        discussion: "Without it, values are kept in memory only. See docs/DURABILITY.md.",
        valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp(
        "Start from this backup (kvoctl backup): copy it into --data-dir, which must be missing or empty.",
        discussion: """
            The backup is checked first (an SQLite database of kvod's, of this kvod's format version or an \
            older one, whole); then kvod starts on it with a new epoch. See docs/OPERATIONS.md, "Backup and restore".
            """,
        valueName: "file"))
    var restore: String?

    @Option(help: ArgumentHelp(
        "When a change reaches the disk: always (fsync before the reply), batch (fsync every 100 ms) or off.",
        valueName: "mode"))
    var sync: String = SyncMode.always.rawValue

    @Option(help: ArgumentHelp(
        "Disk space kept for kvod in its data directory's kvod.reserve file, e.g. 8m (0: none).",
        discussion: """
            While less than this is free for the data directory (on its filesystem and in its database), \
            writes that add data get storage_full; reads, observations and deletes go on. A commit that finds \
            the disk full anyway uses the reserve; kvod fills it again once twice this is free. See \
            docs/DURABILITY.md, "A full disk".
            """,
        valueName: "size"))
    var storageReserve: String = "8m"

    @Option(help: "How many recent changes to keep for observe with since (0 to 10000000).")
    var history: Int = 100_000

    @Option(help: ArgumentHelp(
        "How many bytes of recent changes to keep for observe with since, e.g. 64m.",
        discussion: "Together with --history: the oldest changes go first when either is reached, in memory and in --data-dir."))
    var historyBytes: String = "64m"

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(help: ArgumentHelp(
        "Output waiting for one client beyond which it is not keeping up, at once (e.g. 16m).",
        discussion: "Its events are then held or its connection closed, by each observation's policy; see docs/PROTOCOL.md."))
    var outputHardLimit: String = "16m"

    @Option(help: "Output waiting for one client that may not last longer than --output-soft-seconds (e.g. 4m).")
    var outputSoftLimit: String = "4m"

    @Option(help: "How long output may stay over --output-soft-limit, in seconds.")
    var outputSoftSeconds: Double = 10

    @Option(help: ArgumentHelp(
        "The most clients served at once; more get limit_exceeded and are closed.",
        discussion: "Default: the open-file limit (raised to its hard limit at start) minus 32."))
    var maxConnections: Int?

    @Option(help: ArgumentHelp(
        "The most clients of one uid served at once; more get limit_exceeded and are closed.",
        discussion: "Default: half of --max-connections. Root and kvod's own user are not limited."))
    var maxConnectionsPerUid: Int?

    @Option(help: "The most observations one connection may hold; more get limit_exceeded.")
    var maxObservationsPerConnection: Int = EngineConfiguration.defaultMaxObservationsPerClient

    @Option(help: ArgumentHelp(
        "A ceiling on kvod's memory account, e.g. 1g (0: none).",
        discussion: """
            Counted, not measured: the documents' JSON size, 256 bytes per observation and the history's bytes. \
            Past it, new observations and writes that grow the documents get limit_exceeded; reads and deletes \
            keep working. Must be larger than --history-bytes.
            """))
    var maxMemory: String = "0"

    @Option(help: ArgumentHelp(
        "A ceiling on what waits for all clients together, e.g. 256m (Redis's maxmemory-clients).",
        discussion: """
            Output queued for clients and their held events, summed over connections. Over it, the \
            connections holding the most go to their observations' policy (their events coalesce, or \
            they are disconnected for policy disconnect); replies are never held, so a writer is never \
            slowed. Default: a quarter of --max-memory when it is set, else an eighth of the machine's \
            memory, and at least twice --output-hard-limit.
            """))
    var maxClientMemory: String?

    @Option(help: ArgumentHelp(
        "A JSON file granting read and write per user or group per object-name prefix.",
        discussion: "Without it every client that can open the socket may read and write everything; see docs/SECURITY.md."))
    var policy: String?

    @Option(help: ArgumentHelp(
        "After writing one change to many observers, pause this long before reading more (0: never).",
        discussion: "Changes that arrive meanwhile then leave in the same writes; see docs/PERFORMANCE.md.",
        valueName: "µs"))
    var fanoutPauseMicroseconds: UInt32 = FanOutPacing.defaultPauseMicroseconds

    /// How often at most the connections since the last such line are summed
    /// up at `info` (each is logged at `debug`). Hidden: for the tests.
    @Option(help: ArgumentHelp("Seconds between the info lines that sum up connections.", visibility: .hidden))
    var connectionLogSeconds: UInt64 = 600

    /// The loop's CPU per turn over which the turn is logged with its
    /// longest request (``SlowTurnLog``). Hidden: for the tests.
    @Option(help: ArgumentHelp("Milliseconds of CPU a loop turn may work before it is logged.", visibility: .hidden))
    var slowTurnMilliseconds: UInt64 = SlowTurnLog.defaultThresholdMicroseconds / 1_000

    @Option(help: ArgumentHelp(
        "Run over an etcd cluster: its members' client URLs, comma-separated (e.g. http://10.0.0.1:2379,http://10.0.0.2:2379).",
        discussion: """
            State and order then live in etcd: changes are committed there, and every kvod of the cluster \
            observes them; without etcd changes get unavailable and reads say stale. Not with --data-dir. \
            See docs/CLUSTER.md.
            """,
        valueName: "urls"))
    var etcd: String?

    @Option(help: "Where kvod's keys lie in etcd, with --etcd.")
    var etcdPrefix: String = "/kvod/"

    @Option(help: ArgumentHelp(
        "The etcd cluster's --max-request-bytes, with --etcd.",
        discussion: """
            A change whose etcd Txn (the whole documents it changes and their change records) would be larger \
            is refused with too_large before it is sent. Set it as the cluster is; see docs/CLUSTER.md.
            """,
        valueName: "bytes"))
    var etcdMaxRequestBytes: Int = EtcdLimits.defaultMaxRequestBytes

    @Option(help: ArgumentHelp(
        "The etcd cluster's --max-txn-ops, with --etcd.",
        discussion: """
            A batch whose etcd Txn would carry more operations (a document, its change record inside, per object \
            it changes; two for an object it deletes) is refused with limit_exceeded before it is sent. Set it as \
            the cluster is.
            """,
        valueName: "count"))
    var etcdMaxTxnOps: Int = EtcdLimits.defaultMaxTxnOps

    @Option(help: ArgumentHelp(
        "With --etcd: the ttl of the etcd lease that holds a connection's ephemeral values.",
        discussion: """
            kvod renews it while the connection is open and revokes it when the connection closes; if this \
            kvod dies, the values go at most this long after, on every host. 2 to 3600.
            """,
        valueName: "seconds"))
    var etcdLeaseTtl: Int64 = 10

    @Option(help: ArgumentHelp(
        "With --etcd: how many etcd revisions back a starting kvod reads the changes, so that since works on it as on a kvod that ran all along.",
        discussion: """
            It applies them through its watch before it listens: about 5 s for the default 10,000 on a busy \
            2-core machine, mostly etcd's time (docs/CLUSTER.md). At most --history. 0: start at etcd's newest \
            revision, with no history.
            """,
        valueName: "count"))
    var etcdHistoryRevisions: Int = DaemonConfiguration.defaultEtcdHistoryRevisions

    @Option(help: ArgumentHelp(
        "With --etcd: how much of the watch's changes waits to be applied before kvod stops reading the watch, e.g. 16m.",
        discussion: """
            A kvod catching up applies its watch's changes a slice per loop turn; past this many bytes of \
            keys and values waiting, it leaves the watch unread (etcd holds the rest) until half of it is \
            applied. At least 64k.
            """))
    var etcdWatchBuffer: String = "16m"

    @Option(help: ArgumentHelp(
        "Also serve HTTP/1.1 on this address, e.g. 127.0.0.1:8080 ([::1]:8080, :8080 for loopback); off by default.",
        discussion: """
            On kvod's own loop, beside the socket: /healthz and /readyz, and the objects API and watches for the tokens \
            of --http-tokens; see docs/HTTP.md. \
            Numeric addresses only; port 0 takes a free port (the log names it). Beyond loopback it needs \
            --http-insecure.
            """,
        valueName: "addr:port"))
    var http: String?

    @Option(help: ArgumentHelp(
        "With --http: the tokens HTTP requests may carry, one per line: SUBJECT SHA256HEX.",
        discussion: """
            SUBJECT is uid:N, gid:N, user:NAME or group:NAME, whom a request with that token acts as \
            (the --policy grants and the per-uid limits are its); SHA256HEX is the token's SHA-256, so \
            the file holds no secret. The file must be mode 0600; SIGHUP reads it again. Without it every \
            /v1 request gets 401.
            """,
        valueName: "file"))
    var httpTokens: String?

    @Option(help: ArgumentHelp("With --http: serve TLS with this PEM certificate chain (and --http-key).", valueName: "file"))
    var httpCert: String?

    @Option(help: ArgumentHelp("With --http-cert: the certificate's PEM private key.", valueName: "file"))
    var httpKey: String?

    @Option(help: ArgumentHelp(
        "With --http: the one web origin whose pages may call the API from a browser (CORS), e.g. https://console.example.com.",
        discussion: "Without it kvod sends no CORS header, and browsers keep other origins' pages from reading its answers.",
        valueName: "origin"))
    var httpCorsOrigin: String?

    @Option(help: ArgumentHelp(
        "With --http: how long a request may take to arrive, and an idle keep-alive connection may wait, in seconds.",
        discussion: "A slower sender (a slow-loris) is closed. 1 to 3600."))
    var httpRequestTimeout: Int = 10

    @Flag(help: "With --http-tokens: accept a token that acts as root (uid 0).")
    var httpAllowRootToken = false

    @Flag(help: "With --http: serve /metrics without a token, for a Prometheus scraper.")
    var httpMetricsOpen = false

    @Flag(help: ArgumentHelp(
        "Let --http listen beyond loopback without TLS or without tokens.",
        discussion: "Anyone on the path between a client and kvod can then read its tokens and data, or anyone may use it."))
    var httpInsecure = false

    /// Parses the options set in the environment, then the command line's
    /// (which win), and runs; a refused variable is named in the error.
    static func main() {
        let environment = EnvironmentOptions(ProcessInfo.processInfo.environment)
        let commandLine = Array(CommandLine.arguments.dropFirst())
        let command: KVODCommand
        do {
            command = try parse(environment.arguments + commandLine)
        } catch {
            // --help and --version answer whatever the environment holds.
            do { _ = try parse(commandLine) } catch where exitCode(for: error) == .success { exit(withError: error) }
            catch {}
            if let refused = environment.firstRefused(by: { _ = try parse($0) }) {
                let line = "kvod: \(refused.variable)=\(refused.value): \(message(for: refused.error))\n"
                FileHandle.standardError.write(Data(line.utf8))
                Foundation.exit(ExitCode.validationFailure.rawValue)
            }
            exit(withError: error)
        }
        do {
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    func validate() throws { _ = try daemonConfiguration(environment: ProcessInfo.processInfo.environment) }

    /// The options as the daemon takes them, parsed once for `validate` and
    /// `run`; throws the first refused, in the order of the checks below.
    private func daemonConfiguration(environment: [String: String]) throws -> DaemonConfiguration {
        guard let mode = UInt32(socketMode, radix: 8), mode <= 0o777 else {
            throw ValidationError("--socket-mode must be an octal mode such as 0660")
        }
        guard let syncMode = SyncMode(rawValue: sync) else { throw ValidationError("--sync must be always, batch or off") }
        guard let reserve = OutputLimits.parseSize(storageReserve) else {
            throw ValidationError("--storage-reserve must be a size such as 8m, or 0 for none")
        }
        guard (0...10_000_000).contains(history) else { throw ValidationError("--history must be 0 to 10000000") }
        guard let historyByteCount = OutputLimits.parseSize(historyBytes) else {
            throw ValidationError("--history-bytes must be a size such as 64m")
        }
        guard let memory = OutputLimits.parseSize(maxMemory) else {
            throw ValidationError("--max-memory must be a size such as 1g, or 0 for none")
        }
        let clientMemory = try maxClientMemory.map { text in
            guard let bytes = OutputLimits.parseSize(text), bytes > 0 else {
                throw ValidationError("--max-client-memory must be a size such as 256m")
            }
            return bytes
        }
        guard let watchBuffer = OutputLimits.parseSize(etcdWatchBuffer), watchBuffer >= 64 << 10 else {
            throw ValidationError("--etcd-watch-buffer must be a size of at least 64k, such as 16m")
        }
        if memory > 0, memory <= historyByteCount {
            throw ValidationError("--max-memory (\(memory) bytes) must be larger than --history-bytes (\(historyByteCount) bytes), which counts against it")
        }
        guard maxObservationsPerConnection >= 1 else {
            throw ValidationError("--max-observations-per-connection must be at least 1")
        }
        if let maxConnectionsPerUid, maxConnectionsPerUid < 1 {
            throw ValidationError("--max-connections-per-uid must be at least 1")
        }
        if dataDir?.isEmpty == true { throw ValidationError("--data-dir must not be empty") }
        if restore != nil, dataDir == nil {
            throw ValidationError("--restore needs --data-dir: the data directory to make from the backup")
        }
        guard fanoutPauseMicroseconds <= 10_000 else {
            throw ValidationError("--fanout-pause-microseconds must be 0 to 10000")
        }
        guard maxLineBytes >= 64 else { throw ValidationError("--max-line-bytes must be at least 64") }
        guard let hard = OutputLimits.parseSize(outputHardLimit), hard > 0 else {
            throw ValidationError("--output-hard-limit must be a size such as 16m")
        }
        guard let soft = OutputLimits.parseSize(outputSoftLimit), soft <= hard else {
            throw ValidationError("--output-soft-limit must be a size no larger than --output-hard-limit")
        }
        guard outputSoftSeconds >= 0, outputSoftSeconds < 86_400 else {
            throw ValidationError("--output-soft-seconds must be from 0 to 86400")
        }
        if let maxConnections, maxConnections < 1 {
            throw ValidationError("--max-connections must be at least 1")
        }
        let endpoints = etcd?.split(separator: ",").map(String.init) ?? []
        if let etcd {
            guard !endpoints.isEmpty, endpoints.allSatisfy({ $0.hasPrefix("http://") || $0.hasPrefix("https://") }) else {
                throw ValidationError("--etcd must be http:// or https:// URLs, comma-separated: \(etcd)")
            }
            if dataDir != nil { throw ValidationError("--etcd and --data-dir exclude each other: over etcd, state lives in etcd") }
        }
        guard !etcdPrefix.isEmpty else { throw ValidationError("--etcd-prefix must not be empty") }
        guard etcdMaxRequestBytes >= 1 else { throw ValidationError("--etcd-max-request-bytes must be at least 1") }
        guard etcdMaxTxnOps >= EtcdLimits.leastTxnOps else {
            throw ValidationError("--etcd-max-txn-ops must be at least \(EtcdLimits.leastTxnOps): a deletion deletes a document and puts its record")
        }
        guard (2...3600).contains(etcdLeaseTtl) else { throw ValidationError("--etcd-lease-ttl must be 2 to 3600 seconds") }
        guard etcdHistoryRevisions >= 0 else { throw ValidationError("--etcd-history-revisions must not be negative") }
        let httpEndpoint = try http.map { http in
            let endpoint: HTTPEndpoint
            do throws(HTTPEndpointError) { endpoint = try HTTPEndpoint(parsing: http) } catch { throw ValidationError(error.description) }
            if !endpoint.isLoopback, !httpInsecure, httpCert == nil || httpTokens == nil {
                throw ValidationError("""
                    --http \(http) listens beyond loopback: that needs TLS (--http-cert, --http-key) and tokens \
                    (--http-tokens), or --http-insecure
                    """)
            }
            return endpoint
        }
        guard (1...3600).contains(httpRequestTimeout) else { throw ValidationError("--http-request-timeout must be 1 to 3600 seconds") }
        if (httpCert == nil) != (httpKey == nil) { throw ValidationError("--http-cert and --http-key go together") }
        if let httpCorsOrigin, !(httpCorsOrigin.hasPrefix("http://") || httpCorsOrigin.hasPrefix("https://"))
            || httpCorsOrigin.hasSuffix("/") || httpCorsOrigin == "*" {
            throw ValidationError("--http-cors-origin is one origin, scheme://host[:port] with no path: \(httpCorsOrigin)")
        }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        let outputLimits = OutputLimits(hardBytes: hard, softBytes: soft, softMilliseconds: UInt64(outputSoftSeconds * 1000))
        var configuration = DaemonConfiguration(
            socketPath: socket ?? DefaultSocketPath.resolve(environment: environment),
            socketPathIsDefault: socket == nil && !DefaultSocketPath.isChosen(environment: environment),
            socketMode: mode, maxLineBytes: maxLineBytes, logLevel: level,
            connectionLogSeconds: connectionLogSeconds, slowTurnMicroseconds: slowTurnMilliseconds * 1_000,
            ignoresHangUp: environment["INVOCATION_ID"] != nil,
            dataDirectory: dataDir, restoreFile: restore, syncMode: syncMode, storageReserveBytes: reserve,
            historyCapacity: history, historyBytes: historyByteCount,
            maxObservationsPerConnection: maxObservationsPerConnection, maxMemory: memory, outputLimits: outputLimits,
            maxClientMemory: clientMemory ?? ClientMemoryBudget.defaultLimit(
                maxMemory: memory, physicalBytes: Int(ProcessInfo.processInfo.physicalMemory), floor: 2 * hard),
            maxConnections: maxConnections, maxConnectionsPerUID: maxConnectionsPerUid,
            fanOutPauseMicroseconds: fanoutPauseMicroseconds,
            etcdEndpoints: endpoints, etcdPrefix: etcdPrefix,
            etcdLimits: EtcdLimits(maxRequestBytes: etcdMaxRequestBytes, maxTxnOps: etcdMaxTxnOps),
            etcdLeaseTTL: etcdLeaseTtl, etcdWatchBufferBytes: watchBuffer, httpEndpoint: httpEndpoint,
            httpRequestTimeoutMilliseconds: UInt64(httpRequestTimeout) * 1_000, httpCORSOrigin: httpCorsOrigin,
            httpMetricsOpen: httpMetricsOpen, etcdHistoryRevisions: etcdHistoryRevisions)
        if let httpCert, let httpKey { configuration.httpTLS = (httpCert, httpKey) }
        return configuration
    }

    func run() throws {
        // systemd's variables first: they are unset as they are read, which
        // must happen before anything could start a thread.
        let notification = SystemdNotifier.takeTarget()
        let activated: ActivatedSocket?
        do throws(DaemonError) {
            activated = try SocketActivation.takeListeningSocket()
        } catch {
            throw Self.exit(with: error)
        }
        let environment = ProcessInfo.processInfo.environment
        var configuration = try daemonConfiguration(environment: environment)
        configuration.activatedSocket = activated
        configuration.notifyTarget = notification.target
        let level = configuration.logLevel
        let format: StandardErrorLogHandler.Format =
            JournalStream.isStandardError(environment["JOURNAL_STREAM"]) ? .journal : .plain
        LoggingSystem.bootstrap { label in
            var handler = StandardErrorLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "kvod")
        if let problem = notification.problem { logger.warning("\(problem)") }
        for variable in EnvironmentOptions.unknownVariables(in: environment) {
            logger.warning("\(variable) is set but no option has that variable; ignored (kvod --help names them)")
        }
        do throws(DaemonError) {
            if let policy { configuration.accessPolicy = try AccessPolicyFile.load(policy) }
            if let httpTokens {
                do {
                    configuration.httpTokens = try HTTPTokens(path: httpTokens, allowRoot: httpAllowRootToken)
                    configuration.httpTokensFile = (httpTokens, httpAllowRootToken)
                } catch {
                    throw DaemonError.badTokens(error.description)
                }
            }
            let daemon = try Daemon(configuration: configuration, logger: logger)
            try daemon.run()
        } catch {
            throw Self.exit(with: error)
        }
    }

    /// Prints why kvod cannot run and returns the exit status to throw.
    private static func exit(with error: DaemonError) -> ExitCode {
        // Under systemd the journal files it as an error, like the logger's lines.
        let journal = JournalStream.isStandardError(ProcessInfo.processInfo.environment["JOURNAL_STREAM"])
        let priority = journal ? "<\(Logger.Level.error.journalPriority)>" : ""
        FileHandle.standardError.write(Data("\(priority)kvod: \(error)\n".utf8))
        return ExitCode(error.exitCode)
    }
}
