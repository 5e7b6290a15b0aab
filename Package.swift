// swift-tools-version: 6.1
import PackageDescription

/// Release builds of the daemon's own targets and of the load generator (which
/// must stay cheaper than the servers it measures) skip the runtime exclusivity
/// checks: a `swift_beginAccess` costs about 90 instructions (docs/PERFORMANCE.md).
/// Debug builds, which the tests run, keep them, so a violation still traps there.
/// Not the engine, nor anything else KVOClient's product reaches: SwiftPM refuses a
/// package used by version (`from: "X.Y.Z"`) whose product has unsafe flags
/// (scripts/ci/client-package.sh checks it). The engine's hot stored properties are
/// `@exclusivity(unchecked)` instead (docs/ARCHITECTURE.md, "Where the unsafe code lives").
let releaseSpeed: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "kvod",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "kvod", targets: ["kvod"]),
        .executable(name: "kvod-bench", targets: ["kvod-bench"]),
        .library(name: "KVOEngine", targets: ["KVOEngine"]),
        .library(name: "KVOValues", targets: ["KVOValues"]),
        .library(name: "KVOClient", targets: ["KVOClient"]),
        .executable(name: "kvoctl", targets: ["kvoctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // `swift package generate-documentation --target KVOClient`: the client's DocC catalog.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Metrics in Prometheus's text format, each family with its # HELP (docs/OPERATIONS.md).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // libuv from Debian's libuv1-dev, found through pkg-config.
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        // SQLite from Debian's libsqlite3-dev, found through pkg-config.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // mktemp(3) of kvod's own, so that glibc's, and the linker's warning about it, stay out of
        // kvod and kvoctl (Foundation calls it safely; see its file).
        .target(name: "CMktemp"),
        // A VFS over SQLite's default one that writes a commit's WAL frames with one write(2).
        .target(name: "CSQLiteGather", dependencies: ["CSQLite"]),
        // H2O (Debian's libh2o-dev: the HTTP server built on libuv, its headers need libssl-dev)
        // behind a few plain C calls, so that its macros stay out of Swift: `--http` (docs/HTTP.md).
        .target(
            name: "CH2O",
            cSettings: [.define("H2O_USE_LIBUV", to: "1")],
            linkerSettings: [.linkedLibrary("h2o"), .linkedLibrary("uv"), .linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // SHA-256 from OpenSSL's libcrypto: kvod's HTTP tokens are compared, and kvoctl's
        // `token new` stored, by their digest.
        .target(name: "CSHA256", linkerSettings: [.linkedLibrary("crypto")]),
        // The protocol's names (ops, fields, error codes, event kinds) and the one request
        // encoder of KVOClient, kvoctl and kvod-bench. No dependencies, no Foundation.
        .target(name: "KVOProtocol"),
        // The values client and server share: JSONValue with its reader and writer, ResumePoint,
        // the default socket path and its directory's rule. What KVOClient, kvoctl and KVOEtcd
        // take of kvod's own code besides KVOProtocol, without the engine.
        .target(
            name: "KVOValues",
            dependencies: ["KVOProtocol", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // The KVO engine: store, controllers, change model and wire codec. No I/O.
        .target(
            name: "KVOEngine",
            dependencies: [
                "KVOProtocol", "KVOValues",
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        // The version and commit kvod and kvoctl were built from, read from git at build time by
        // scripts/build-info.sh through the plugin (docs/OPERATIONS.md, "Versions and releases").
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        .target(name: "KVOBuildInfo", plugins: ["BuildInfoPlugin"]),
        // Durable state: the SQLite data directory and the thread that commits to it.
        .target(
            name: "KVOStorage",
            dependencies: ["KVOEngine", "KVOValues", "KVOBuildInfo", "CSQLite", "CSQLiteGather", .product(name: "DequeModule", package: "swift-collections")]
        ),
        // kvod's connection logic without libuv (reading, pausing, closing as a
        // pure state machine), a library so that its unit tests can import it.
        .target(name: "KVODCore", dependencies: ["KVOEngine", "KVOProtocol", "KVOValues"], swiftSettings: releaseSpeed),
        // The daemon: libuv event loop, listener, connections, glue.
        .executableTarget(
            name: "kvod",
            dependencies: [
                "KVOEngine",
                "KVOValues",
                "KVOBuildInfo",
                "CMktemp",
                "KVODCore",
                "KVOStorage",
                "KVOEtcd",
                "KVOCluster",
                "CLibUV",
                "CH2O",
                "CSHA256",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The console's page, built into the binary (docs/HTTP.md, "The console").
            resources: [.embedInCode("Console/index.html"), .embedInCode("Console/console.js"),
                        .embedInCode("Console/console.css")],
            swiftSettings: releaseSpeed
        ),
        // <sys/epoll.h>, which Glibc's Swift module leaves out; for kvod-bench only.
        .systemLibrary(name: "CEpoll"),
        // The load generator: kvod beside Redis over real Unix sockets (docs/PERFORMANCE.md).
        // A client like any other: of kvod's code it shares only KVOProtocol (the names, the request encoder).
        .executableTarget(
            name: "kvod-bench",
            dependencies: ["CEpoll", "KVOProtocol", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: releaseSpeed
        ),
        // Runs one request spelling through the decoder or the engine N times, for
        // callgrind's instruction counts (docs/PERFORMANCE.md).
        .executableTarget(name: "kvod-decode-profile", dependencies: ["KVOEngine"], swiftSettings: releaseSpeed),
        // libcurl from Debian's libcurl4-openssl-dev, found through pkg-config; for KVOEtcd only.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // An etcd v3 client (the JSON gateway over libcurl's multi interface, driven by
        // the caller's event loop): kvod's `--etcd` mode (docs/CLUSTER.md).
        .target(name: "KVOEtcd", dependencies: ["KVOValues", "CCurl"]),
        // The cluster's rules (replication, leases, epochs, lease ends turned into deletions): the
        // engine's ChangeReplicator over etcd, which it reaches through a ClusterBackend and whose time
        // a ClusterLoop keeps, both the daemon's (docs/CLUSTER.md). KVOEtcd for its requests and answers only.
        .target(
            name: "KVOCluster",
            dependencies: ["KVOEngine", "KVOValues", "KVOProtocol", "KVOEtcd", .product(name: "Logging", package: "swift-log")]
        ),
        // The Swift client: KVOController's interface and async/await over one
        // connection. Foundation, Dispatch, KVOProtocol's names and KVOValues' JSON; no engine, no libuv.
        .target(
            name: "KVOClient",
            dependencies: [
                "KVOValues", "KVOProtocol",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // One observer of kvod-bench's fan-out through KVOClient, run as a process per
        // observer: the events/s a Swift program gets, its decoding included.
        .executableTarget(name: "kvod-bench-observer", dependencies: ["KVOClient"]),
        // The Swift reader of scripts/bench-client.sh: a KVOClient program's rate of changes (issue 30).
        .executableTarget(name: "kvod-client-rate", dependencies: ["KVOClient"]),
        // The command line for shells, built on KVOClient.
        .executableTarget(
            name: "kvoctl",
            dependencies: [
                // KVOStorage: `backup` checks the file it wrote as kvod checks a backup it restores.
                // CSHA256: `token new` prints the digest of the token it makes.
                "KVOClient", "KVOValues", "KVOProtocol", "KVOStorage", "KVOBuildInfo", "CMktemp", "CSHA256",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // docs/CLIENT.md's examples, one per style and one of prefixes and whole documents, kept compiling and tested.
        .executableTarget(name: "AsyncExample", dependencies: ["KVOClient"], path: "Examples/AsyncExample"),
        .executableTarget(name: "ControllerExample", dependencies: ["KVOClient"], path: "Examples/ControllerExample"),
        .executableTarget(name: "RegistryExample", dependencies: ["KVOClient"], path: "Examples/RegistryExample"),
        // docs/CLIENT.md's shorter snippets (onError, reconnecting, isolation, …), each in a file whose
        // shown part the guide holds verbatim; those that need only a kvod are run by ExamplesTests.
        // Files the build compiles anyway, rather than blocks extracted into a scratch package that
        // CI would resolve and build KVOClient for a second time.
        .executableTarget(name: "ClientSnippets", dependencies: ["KVOClient"], path: "Examples/ClientSnippets"),
        // Fuzzing: the harness (framing + decoding + engine, with invariant
        // checks) and its executable. See scripts/ci/fuzz.sh.
        .target(name: "KVOFuzzing", dependencies: ["KVOEngine", "KVOValues"]),
        .executableTarget(name: "kvod-fuzz", dependencies: ["KVOFuzzing"]),
        // What every test target shares: the real kvod started on a temporary
        // socket, a blocking line client, waiting with deadlines (blocking or
        // async), command runs, a seeded random generator.
        .target(name: "KVOTestSupport", dependencies: ["KVOValues"], path: "Tests/KVOTestSupport"),
        // A linearizability checker on Porcupine's algorithm and kvod's per-object model, for
        // the tests that check recorded histories (issue 35; docs/RELIABILITY.md). Plain Swift.
        // Optimized in debug builds too: a history's search runs a hundred times faster so.
        .target(name: "Linearizability", path: "Tests/Linearizability", swiftSettings: [.unsafeFlags(["-O"])]),
        .testTarget(name: "LinearizabilityTests", dependencies: ["Linearizability"]),
        .testTarget(name: "KVOProtocolTests", dependencies: ["KVOProtocol"]),
        .testTarget(
            name: "KVOEngineTests", dependencies: ["KVOEngine", "KVOValues", "KVOProtocol", "KVOFuzzing", "KVOTestSupport"]
        ),
        .testTarget(name: "KVOStorageTests", dependencies: ["KVOStorage", "KVOEngine", "KVOValues", "KVOTestSupport"]),
        .testTarget(name: "KVODCoreTests", dependencies: ["KVODCore", "KVOEngine", "KVOValues"]),
        .testTarget(name: "kvodTests", dependencies: ["KVOEngine", "KVOValues", "KVOStorage", "KVOTestSupport", "Linearizability", "CMktemp"]),
        // Holds thousands of observing connections for kvodTests, in a process
        // of its own (see its header for why).
        .executableTarget(name: "kvod-crowd", dependencies: ["KVOTestSupport"], path: "Tests/Tools/kvod-crowd"),
        .testTarget(name: "KVOClientTests", dependencies: ["KVOClient", "KVOValues", "KVOTestSupport"]),
        .testTarget(name: "kvoctlTests", dependencies: ["KVOClient", "KVOValues", "KVOTestSupport"]),
        // KVOEtcd against a real 3-member etcd cluster; skipped when etcd is not installed.
        .testTarget(name: "KVOEtcdTests", dependencies: ["KVOEtcd", "KVOValues", "KVOTestSupport"]),
        // KVOCluster's rules against an etcd in memory that loses answers, compacts and stalls on demand.
        .testTarget(
            name: "KVOClusterTests",
            dependencies: ["KVOCluster", "KVOEngine", "KVOValues", "KVOEtcd", "KVOProtocol", .product(name: "Logging", package: "swift-log")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
