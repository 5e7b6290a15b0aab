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
