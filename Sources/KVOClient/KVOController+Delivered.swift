/// Waiting, on the observer's side, until a change has been through the blocks.
extension KVOController {
    /// Returns once every change up to `seq` that this controller's
    /// observations receive has run through their blocks and actions (or was
    /// dropped: unobserved, the observer gone, folded for a slow observer).
    ///
    /// For a program or a test that learnt a seq elsewhere (a writer's reply,
    /// a message) and must act once its own callbacks have seen it, with no
    /// sleep and no polling of its own state:
    ///
    /// ```swift
    /// let seq = try await writer.set("printer/1", "status", to: "idle")
    /// try await panel.kvo.delivered(through: seq)   // the block has run for that change
    /// ```
    ///
    /// It asks kvod, on this connection, for its current seq: kvod writes the
    /// events of every change it has applied before that reply (docs/PROTOCOL.md,
    /// "Events"), so once the reply is read, the changes up to `seq` are in the
    /// controller's hands, and it then waits until the blocks have run for
    /// them (and any that came with them). Over etcd, where this kvod may not
    /// have applied `seq` yet, it asks again until it has, for at most the
    /// request timeout. Changes kvod holds back on purpose are not waited for:
    /// a throttled observation's latest change (``DeliveryOptions/throttle``),
    /// and changes folded while the connection had fallen behind.
    ///
    /// Call it from anywhere but this controller's own queue: it waits for
    /// that queue (`queue: .main` and a `@MainActor` caller are fine, as the
    /// caller's await frees the main queue).
    ///
    /// - Throws: what the `info` request throws; `KVOClientError.Code.timedOut`
    ///   when kvod has not reached `seq` within the request timeout.
    public func delivered(through seq: UInt64) async throws(KVOClientError) {
        try await connection.reach(seq)
        // Every change read before the reply has been handed to a sink: wait for what each has received.
        for (sink, count) in sinks.map({ ($0, $0.receivedCount) }) { await sink.waitUntilDone(count) }
    }
}
