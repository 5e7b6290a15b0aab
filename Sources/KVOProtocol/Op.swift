/// The operations a request's `op` names (docs/PROTOCOL.md, "Operations"), in the order the
/// daemon's figures by op list them (its metrics, the engine's table of ops).
public enum Op: String, CaseIterable, Sendable {
    /// Sets the value at a key path, or a whole document without one.
    case set
    /// Reads the value at a key path, or a whole document.
    case get
    /// Deletes the value at a key path, or a whole object.
    case delete
    /// Inserts `value` or `values` into an array.
    case insert
    /// Removes the elements of an array at `index` or `indexes`.
    case remove
    /// Replaces the elements of an array at `index` or `indexes`.
    case replace
    /// Observes key paths of an object, or of every object under a prefix.
    case observe
    /// Ends observations of an object or prefix.
    case unobserve
    /// Ends every observation of the connection.
    case unobserveAll
    /// Does nothing but answer.
    case ping
    /// The daemon's figures: version, counts, resources.
    case info
    /// A page of the connection's observations.
    case observations
    /// A page of the names of the objects under a prefix.
    case list
    /// Change requests applied as one: all or none.
    case batch
    /// The daemon's metrics in Prometheus's text format.
    case metrics
    /// The connection has handled every event up to `seq` on its ack observations.
    case ack
    /// Adds the integer `by` to the integer at a key path (a missing value counts as 0).
    case add
    /// A consistent copy of the data directory's database, taken and then read in chunks.
    case backup
}
