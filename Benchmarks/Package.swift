// swift-tools-version: 6.1
import PackageDescription

// Engine micro-benchmarks (ordo-one/benchmark, with malloc counts), in their own
// package so that the main build and test never compile the benchmark framework.
// `kvod` is a symlink to the repository root: it gives the root package the same
// identity whatever the clone's folder is called.
//
//     cd Benchmarks && swift package benchmark
let package = Package(
    name: "kvod-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "kvod"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "KVOEngine", package: "kvod"),
                .product(name: "KVOValues", package: "kvod"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
