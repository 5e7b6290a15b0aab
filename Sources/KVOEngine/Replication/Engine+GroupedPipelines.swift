/// Group commit across connections over etcd (docs/CLUSTER.md, "Pipelined
/// changes"): the pipelines of every client read in one loop turn are
/// proposed together at the turn's end, as few transactions as the store's
/// limits allow. Each client's ops stay in its order and contiguous; each
/// gets its own reply once the transaction's revision is applied; an op that
/// would fail is answered alone, and the others go on without it.
extension Engine {
    /// Whether ``proposeQueuedPipelines()`` has anything to propose.
    public var hasQueuedPipelines: Bool { proposals.hasQueuedPipelines }

    /// Proposes every pipeline queued since the last call (the daemon calls
    /// it at the end of each loop turn), several clients' in one transaction
    /// while they fit (``PipelineGroup``). Returns at once when none waits.
    public func proposeQueuedPipelines() {
        guard proposals.hasQueuedPipelines else { return }
        guard let replicator else { return _ = proposals.takeQueuedPipelines() }
        let maxObjects = max(1, replicator.maxObjectsPerProposal)
        // A proposal that fails at once may queue pipelines again (the ops behind it): they go in the next round.
        while proposals.hasQueuedPipelines {
            let clients = proposals.takeQueuedPipelines()
            var group = PipelineGroup(maxObjects: maxObjects)
            for client in clients {
                client.pipelineQueued = false
                guard !client.isClosed, !client.pipelined.isEmpty else { continue }
                let part = PipelineGroup.Part(client: client, requests: client.pipelined.removeAll())
                // Spoken for: nothing of it is read or answered until its group's outcome.
                client.awaitsReplication = true
                if group.add(part) { continue }
                propose(group, through: replicator)
                group = PipelineGroup(maxObjects: maxObjects)
                _ = group.add(part)
            }
            if !group.isEmpty { propose(group, through: replicator) }
        }
    }

    /// Proposes `group` as one transaction (a single request as itself). A
    /// request the trial fails is answered alone after its client's ones
    /// before it, which stay in the group; the other clients' go on.
    private func propose(_ candidates: PipelineGroup, through replicator: ChangeReplicator, attempt: Int = 1) {
        for part in candidates.parts where part.client.isClosed { part.client.awaitsReplication = false }
        let group = PipelineGroup(candidates.parts.filter { !$0.client.isClosed && !$0.requests.isEmpty },
                                  maxObjects: candidates.maxObjects)
        guard let first = group.parts.first else { return }
        if group.parts.count == 1, first.requests.count == 1 {
            first.client.awaitsReplication = false
            return handleReplicated(first.requests[0], from: first.client, through: replicator, attempt: attempt)
        }
        let trial: (proposal: BatchProposal, changed: [Bool], sums: [Int?])
        do throws(KVOEngineError) {
            trial = try batchProposal(group.requests.map { ChangeOperation(operation: $0.operation,
                                                                            condition: $0.condition) })
        } catch {
            return trialFailed(error, in: group, through: replicator, attempt: attempt)
        }
        var proposal = trial.proposal
        let (changed, sums) = (trial.changed, trial.sums)
        attribute(&proposal, to: group)
        for part in group.parts {
            part.client.awaitsReplication = true
            part.client.replicatingBytes = part.requests.reduce(0) { $0 + $1.heldBytes }
        }
        replicator.propose(proposal) { [self] outcome in
            answer(outcome, to: group, changed: changed, sums: sums, through: replicator, attempt: attempt)
        }
    }

    /// The trial of `group` failed: the request it names (none named: the
    /// first) is answered alone, after its client's requests before it; the
    /// group goes on without it and its client's requests after it. A
    /// failure of the whole (`--max-memory`) splits the group by client.
    private func trialFailed(_ error: KVOEngineError, in group: PipelineGroup, through replicator: ChangeReplicator,
                             attempt: Int) {
        var index: Int?
        if case .number(let number)? = error.details["index"], let position = number.intValue { index = position }
        if index == nil, group.parts.count > 1 {
            for part in group.parts {
                propose(PipelineGroup([part], maxObjects: group.maxObjects), through: replicator, attempt: attempt)
            }
            return
        }
        let (partIndex, failing) = group.locate(index ?? 0) ?? (0, 0)
        var parts = group.parts
        let part = parts[partIndex]
        part.client.parked.prepend(contentsOf: part.requests[failing...].indices.map {
            $0 == failing ? .alone(part.requests[$0]) : .request(part.requests[$0])
        })
        parts[partIndex].requests = Array(part.requests[..<failing])
        if failing == 0 { parts.remove(at: partIndex) }
        propose(PipelineGroup(parts, maxObjects: group.maxObjects), through: replicator, attempt: attempt)
        if failing == 0 {
            part.client.awaitsReplication = false
            answerParked(of: part.client)
        }
    }

    /// Who made each step: the clients' uid on every record when they share
    /// one, else each step's own (the records say who made each op).
    private func attribute(_ proposal: inout BatchProposal, to group: PipelineGroup) {
        let uids = group.parts.map { $0.client.credentials?.uid }
        guard Set(uids).count > 1 else { return proposal.context.uid = uids.first ?? nil }
        var owner: [UInt32?] = []
        for (part, uid) in zip(group.parts, uids) { owner += repeatElement(uid, count: part.requests.count) }
        for change in proposal.changes.indices {
            for step in proposal.changes[change].steps.indices {
                proposal.changes[change].steps[step].change.context.uid =
                    owner[proposal.changes[change].steps[step].position]
            }
        }
    }

    /// Tells each client of `group` what became of its requests: each its
    /// reply at the revision; a lost race, the group computed again (at most
    /// ``maxProposalAttempts`` times); a group the store's limits refuse, each
    /// client's pipeline on its own; otherwise what today a lone pipeline gets.
    private func answer(_ outcome: ProposalOutcome, to group: PipelineGroup, changed: [Bool], sums: [Int?],
                        through replicator: ChangeReplicator, attempt: Int) {
        for part in group.parts { part.client.awaitsReplication = false }
        let live = group.parts.filter { !$0.client.isClosed }
        switch outcome {
        case .applied(let seq):
            var position = 0
            for part in group.parts {
                defer { position += part.requests.count }
                guard !part.client.isClosed else { continue }
                for (offset, request) in part.requests.enumerated() {
                    // An add changed its value: only an op that changed nothing has the current seq.
                    let reply = ReplyEncoder(seq: changed[position + offset] ? seq : store.seq, sum: sums[position + offset])
                    part.client.append(reply, id: request.id)
                }
            }
        case .conflict where attempt < Self.maxProposalAttempts:
            return propose(PipelineGroup(live, maxObjects: group.maxObjects), through: replicator, attempt: attempt + 1)
        case .refused where live.count > 1:
            // Over the store's request bytes, which only it measures: each client's pipeline as its own transaction.
            for part in live {
                propose(PipelineGroup([part], maxObjects: group.maxObjects), through: replicator, attempt: attempt)
            }
            return
        case .conflict, .unavailable, .refused:
            // Nothing changed: each is tried alone.
            for part in live { part.client.parked.prepend(contentsOf: part.requests.map { .alone($0) }) }
        case .unknown(let message):
            // Maybe applied: proposing any of them again could apply it twice, so each is told so.
            for part in live {
                part.client.parked.prepend(contentsOf: part.requests.map {
                    .failure(id: $0.id, error: KVOEngineError(.unavailable, message))
                })
            }
        }
        for part in live { answerParked(of: part.client) }
    }
}
