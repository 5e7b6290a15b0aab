/// The members of `info`'s nested objects (docs/PROTOCOL.md, "info"); its
/// top-level members are ``Field``'s.
public enum InfoFigure {
    /// The members of `memory` and `clientMemory`: bytes accounted, by kind.
    public enum Memory: String, CaseIterable, MemberName {
        /// All of the account's bytes.
        case total
        /// The documents' bytes.
        case documents
        /// The observations' bytes.
        case observations
        /// The change history's bytes.
        case history
        /// The value lifetimes' bytes.
        case leases
        /// The throttled observations' held events.
        case throttles
        /// The computed key paths' aggregates.
        case aggregates
        /// Over `--etcd`: the requests waiting behind changes in flight.
        case requests
        /// The limit; 0: none.
        case limit
        /// `clientMemory`'s highest total since start.
        case peak
        /// `clientMemory`: how many times the budget sent a connection to its observations' policy.
        case congested
        /// `clientMemory`: connections disconnected for not reading while others waited for the budget's room.
        case evicted
    }

    /// The members of `refused`: what each limit refused since start.
    public enum Refused: String, CaseIterable, MemberName {
        /// Connections over `--max-connections`.
        case connections
        /// Connections over `--max-connections-per-uid`.
        case connectionsPerUid
        /// Observations over `--max-observations-per-connection`.
        case observations
        /// Observations and writes over `--max-memory`.
        case memory
        /// Writes refused for a full disk.
        case storage
    }

    /// The members of `storage`: the data directory's room to write.
    public enum Storage: String, CaseIterable, MemberName {
        /// Whether writes that add data are refused.
        case full
        /// Since when, with `full` only.
        case since
        /// Batches of changes not committed yet.
        case commitsInFlight
        /// Connections whose output waits for a commit.
        case heldOutputConnections
        /// How long the oldest of them has waited, in milliseconds.
        case heldOutputOldestMs
        /// Free bytes on the filesystem for kvod, plus free pages in `kvod.db`.
        case availableBytes
        /// `--storage-reserve`.
        case reserveBytes
        /// `false` once a commit that found the disk full used the reserve, until it is filled again.
        case reserveHeld
        /// How many `backup` copies are kept for their clients.
        case backups
        /// Their bytes.
        case backupBytes
    }

    /// The members of `cluster`, over etcd (docs/CLUSTER.md).
    public enum Cluster: String, CaseIterable, MemberName {
        /// The etcd endpoints kvod was given.
        case endpoints
        /// The one in use.
        case endpoint
        /// Whether the watch is in place, so the member has a leader.
        case leader
        /// Whether this kvod is behind the cluster.
        case stale
        /// The last etcd revision applied.
        case appliedRevision
        /// The last etcd revision known.
        case etcdRevision
        /// The revisions between them.
        case lag
        /// Watch events received and not applied yet.
        case unappliedEvents
        /// The most watch events applied in one loop turn since kvod started.
        case largestWatchSlice
        /// How often the watch was left unread while its changes waited for their slices.
        case watchPauses
        /// The etcd cluster's id, in hex.
        case clusterId
        /// How long ago the watch last spoke, in milliseconds.
        case lastWatchResponseMs
        /// Why this kvod is stale, with `stale` only.
        case error
    }
}
