/// Takes and reads the snapshots `backup` asks for: the daemon, which keeps
/// the data directory (the engine knows no storage). Loop-confined.
public protocol BackupSource: AnyObject {
    /// Starts a snapshot for `client`, or lets it share the one being taken;
    /// once it is taken (or failed) the source calls ``Engine/backupTaken(for:_:)``.
    /// Throws when none can be taken now.
    func startBackup(for client: ClientController) throws(KVOEngineError)
    /// Up to `count` bytes of `client`'s snapshot from `offset`: fewer only
    /// at its end, none past it.
    func readBackup(of client: ClientController, at offset: UInt64, count: Int) throws(KVOEngineError) -> [UInt8]
    /// The snapshots kept now for clients (not the one being made) and their
    /// bytes: disk they take that the data directory's `du` does not show.
    var held: (count: Int, bytes: UInt64) { get }
}

/// What a `backup`'s reply says once its snapshot is taken.
public struct BackupSummary: Sendable, Equatable {
    /// The seq the snapshot holds every change up to.
    public var seq: UInt64
    /// Its length in bytes.
    public var size: UInt64

    public init(seq: UInt64, size: UInt64) {
        self.seq = seq
        self.size = size
    }
}

/// A `backup` whose reply waits for its snapshot (``ClientController/isAwaiting``).
struct AwaitedBackup {
    let id: RequestID?
}

/// `backup` (docs/PROTOCOL.md, "Backups"): without `offset` it asks the
/// daemon for a snapshot and answers once it is taken; with `offset`, it
/// answers a chunk of it in base64. The access check came first.
extension Engine {
    /// The most bytes of a snapshot one reply carries: 64 KiB of base64, one
    /// connection's share of a loop turn.
    public static let backupChunkBytes = 48 << 10

    /// Asks for a snapshot; the reply waits for ``backupTaken(for:_:)``.
    func startBackup(replyingTo id: RequestID?, for client: ClientController) throws(KVOEngineError) {
        try backupSourceHere().startBackup(for: client)
        client.awaitedBackup = AwaitedBackup(id: id)
    }

    /// `data`: the client's snapshot from `offset`, in base64.
    func writeBackupChunk(at offset: UInt64, for client: ClientController,
                          into reply: inout ReplyEncoder) throws(KVOEngineError) {
        let bytes = try backupSourceHere().readBackup(of: client, at: offset, count: Self.backupChunkBytes)
        reply.field(.data) { text in
            text.reserveCapacity(text.count + Base64Text.length(of: bytes.count) + 2)
            text.append(UInt8(ascii: "\""))
            bytes.withUnsafeBytes { Base64Text.append($0, to: &text) }
            text.append(UInt8(ascii: "\""))
        }
    }

    /// The source, or why this kvod takes no backup.
    private func backupSourceHere() throws(KVOEngineError) -> any BackupSource {
        if replicator != nil {
            throw .badRequest("this kvod runs over etcd (--etcd), which holds its state: back up etcd with "
                + "etcdctl snapshot save (docs/CLUSTER.md)")
        }
        guard let backupSource else {
            throw .badRequest("this kvod keeps its state in memory only (no --data-dir): there is no database to back up")
        }
        return backupSource
    }

    /// The daemon took `client`'s snapshot (or could not): its `backup`
    /// gets its reply, and the client is read again.
    public func backupTaken(for client: ClientController, _ outcome: Result<BackupSummary, KVOEngineError>) {
        guard let awaited = client.awaitedBackup else { return }
        client.awaitedBackup = nil
        switch outcome {
        case .success(let summary):
            var reply = ReplyEncoder()
            reply.seq(summary.seq)
            reply.field(.size, integer: summary.size)
            client.append(reply, id: awaited.id)
        case .failure(let error):
            client.append(reply: ReplyEncoder.failure(id: awaited.id, error))
        }
    }
}
