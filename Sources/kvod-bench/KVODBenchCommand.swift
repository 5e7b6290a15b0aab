import ArgumentParser

/// `kvod-bench`: the benchmark of issue 5. `load` (the default) measures kvod
/// beside Redis over real Unix sockets; `cluster` measures kvod over etcd
/// beside etcd itself (issue 18); `micro-summary` turns the engine
/// micro-benchmarks' report into docs/PERFORMANCE.md's table.
@main
struct KVODBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvod-bench",
        abstract: "kvod's benchmark: kvod beside Redis on this machine, kvod over etcd beside etcd, and the engine micro-benchmarks' summary.",
        subcommands: [LoadCommand.self, ClusterCommand.self, MicroSummaryCommand.self],
        defaultSubcommand: LoadCommand.self)
}

/// The options `load` and `cluster` share. Not `--rounds` (their defaults differ), nor `--write`
/// and `--command`, whose help or default names each one's own section and command line.
struct SharedOptions: ParsableArguments {
    @Option(help: "standard (the reported figures) or tiny (a quick check that every scenario works).")
    var size: String = "standard"

    @Option(help: "The kvod binary.")
    var kvod: String = ".build/release/kvod"

    @Option(help: "The kvod commit to record in the report.")
    var commit: String = "unknown"

    func validate() throws {
        guard size == "standard" || size == "tiny" else { throw ValidationError("--size must be standard or tiny") }
    }
}
