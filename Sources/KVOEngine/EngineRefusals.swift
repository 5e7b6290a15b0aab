/// How many requests the engine refused for a limit on resources, by limit:
/// what `info` reports under `refused`, next to the daemon's refused connections.
public struct EngineRefusals: Sendable, Equatable {
    /// `observe` requests over `--max-observations-per-connection`.
    public var observations = 0
    /// `observe` requests and writes refused for `--max-memory`.
    public var memory = 0
    /// Writes refused with `storage_full` while the data directory's disk was full.
    public var storage = 0
}
