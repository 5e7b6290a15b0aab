import ArgumentParser

/// `kvod-bench`: the benchmark of issue 5. `load` (the default) measures kvod
/// beside Redis over real Unix sockets; `micro-summary` turns the engine
/// micro-benchmarks' report into docs/PERFORMANCE.md's table.
@main
struct KVODBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvod-bench",
        abstract: "kvod's benchmark: kvod beside Redis on this machine, and the engine micro-benchmarks' summary.",
        subcommands: [LoadCommand.self, MicroSummaryCommand.self],
        defaultSubcommand: LoadCommand.self)
}
