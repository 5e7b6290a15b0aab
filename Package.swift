// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "kvod",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "kvod", targets: ["kvod"]),
        .library(name: "KVOEngine", targets: ["KVOEngine"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
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
        // The KVO engine: store, controllers, change model and wire codec. No I/O.
        .target(
            name: "KVOEngine",
            dependencies: [
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // Durable state: the SQLite data directory and the thread that commits to it.
        .target(name: "KVOStorage", dependencies: ["KVOEngine", "CSQLite"]),
        // The daemon: libuv event loop, listener, connections, glue.
        .executableTarget(
            name: "kvod",
            dependencies: [
                "KVOEngine",
                "KVOStorage",
                "CLibUV",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "KVOEngineTests", dependencies: ["KVOEngine"]),
        .testTarget(name: "KVOStorageTests", dependencies: ["KVOStorage", "KVOEngine"]),
        .testTarget(name: "kvodTests", dependencies: ["KVOEngine"]),
    ],
    swiftLanguageModes: [.v6]
)
