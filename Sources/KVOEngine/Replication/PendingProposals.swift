/// Over a replicator, what this kvod has to propose or waits to hear the end
/// of: the clients whose pipelines wait for the loop turn's end, in the
/// order they were queued (``Engine/proposeQueuedPipelines()``), and its
/// changes with `await` not decided yet, by the token their records carry.
final class PendingProposals {
    @exclusivity(unchecked) private var queued: [ClientController] = []
    @exclusivity(unchecked) var awaited: [UInt64: AwaitedProposal] = [:]

    var hasQueuedPipelines: Bool { !queued.isEmpty }

    /// Queues `client`'s pipeline for the turn's end; nothing more of it is
    /// read meanwhile (``ClientController/isAwaiting``).
    func queuePipeline(of client: ClientController) {
        guard !client.pipelineQueued else { return }
        client.pipelineQueued = true
        queued.append(client)
    }

    /// The queued clients, in order; the queue starts again empty (each
    /// client stays marked queued until its pipeline is taken).
    func takeQueuedPipelines() -> [ClientController] {
        defer { queued.removeAll(keepingCapacity: true) }
        return queued
    }

    /// Registers `proposal` under a token no other holds, and returns it.
    func register(_ proposal: AwaitedProposal) -> UInt64 {
        var token = UInt64.random(in: 1...UInt64.max)
        while awaited[token] != nil { token = UInt64.random(in: 1...UInt64.max) }
        awaited[token] = proposal
        return token
    }
}

/// A change with `await` proposed by this kvod, until its outcome comes
/// (``PendingProposals/awaited``): what its wait needs when its revision is applied.
final class AwaitedProposal {
    let id: RequestID?
    let awaiting: ChangeAwait
    let client: ClientController
    /// The ok reply at the committed seq, without `observers` and `acknowledged`.
    let reply: (UInt64) -> ReplyEncoder
    /// Whether its revision was applied here and its wait started.
    var isWaiting = false

    init(id: RequestID?, awaiting: ChangeAwait, client: ClientController, reply: @escaping (UInt64) -> ReplyEncoder) {
        self.id = id
        self.awaiting = awaiting
        self.client = client
        self.reply = reply
    }
}
