/// `await` over a replicated store (docs/CLUSTER.md, "await over etcd"): a
/// change's events are made when this kvod applies the revision its follow
/// of the store delivers, not when it is proposed. So a change with `await`
/// carries a token in its record (``ChangeContext/awaitID``); when the
/// revision that carries it is applied here, the observations it is due to
/// reach on this kvod are gathered as in local mode, and the writer's reply
/// waits for them from then on. Other kvods ignore the token: their
/// observers are not counted.
extension Engine {
    /// Holds `client`'s reads until `request`'s proposal, about to be made, is
    /// decided (its bytes counted), and registers its await (nil: it has none);
    /// returns the token its records carry. `reply` makes the ok reply at the committed seq.
    func beginProposal(of request: Request, from client: ClientController,
                       reply: @escaping (UInt64) -> ReplyEncoder) -> UInt64? {
        client.awaitsReplication = true
        client.replicatingBytes = request.heldBytes
        guard let awaiting = request.awaiting else { return nil }
        return proposals.register(AwaitedProposal(id: request.id, awaiting: awaiting, client: client, reply: reply))
    }

    /// Applies a revision's changes (`body`) that carry `token`: when this
    /// kvod proposed them with `await`, the observations they are due to
    /// reach are gathered while they are dispatched, and the writer's wait starts.
    func applyAwaited(_ token: UInt64?, seq: UInt64, _ body: () -> Void) {
        guard let token, shared.awaitCollector == nil, let awaited = proposals.awaited[token], !awaited.isWaiting else {
            return body()
        }
        let client = awaited.client
        let collector = AwaitCollector(writer: client, condition: awaited.awaiting.condition)
        shared.awaitCollector = collector
        body()
        shared.awaitCollector = nil
        awaited.isWaiting = true
        guard !client.isClosed else { return }
        startWait(id: awaited.id, awaited.awaiting, of: client, reply: awaited.reply(seq), seq: seq, for: collector) {
            [weak self, weak client] in
            // What the client sent after its change waited for the reply.
            if let self, let client { answerParked(of: client) }
        }
    }

    /// Ends the registration of `token` as its proposal's outcome comes;
    /// returns whether the reply is the wait's (its revision was applied
    /// here and the wait started), so the outcome answers nothing else: the
    /// wait's reply goes now if the wait ended already, else when it ends.
    func outcomeOfAwait(_ token: UInt64?, _ outcome: ProposalOutcome, to request: Request,
                        from client: ClientController) -> Bool {
        guard let token, let awaited = proposals.awaited.removeValue(forKey: token) else { return false }
        if awaited.isWaiting {
            if let reply = client.replyAfterOutcome {
                client.replyAfterOutcome = nil
                if !client.isClosed { client.append(reply: reply) }
            }
            return true
        }
        // Committed without events of its own here (a batch that changed nothing): nothing is due.
        guard case .applied(let seq) = outcome else { return false }
        startWait(id: request.id, awaited.awaiting, of: client, reply: awaited.reply(seq), seq: seq,
                  for: AwaitCollector(writer: client, condition: awaited.awaiting.condition))
        return true
    }
}
