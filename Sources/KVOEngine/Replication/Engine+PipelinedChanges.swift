/// Pipelined change ops over etcd (docs/CLUSTER.md, "Pipelined changes"): the
/// change requests a client sent in a row, read together, are proposed as one
/// transaction through the batch machinery (one revision; every kvod replays
/// the ops in order, each with its own events), and each gets its own reply,
/// in request order. An op that would fail is answered alone, against the
/// state the ops before it leave, as if it had been sent by itself.
extension Engine {
    /// The most change requests proposed as one transaction: 64 objects'
    /// documents and records fill etcd's default 128 `Txn` operations.
    public static let maxPipelinedChanges = 64

    /// Proposes the change requests `client` sent in a row: the daemon calls
    /// it once it has handled what it read. Returns whether the client now
    /// awaits its changes (read nothing more from it until they are answered).
    public func proposePipelinedChanges(of client: ClientController) -> Bool {
        guard let replicator, !client.pipelined.isEmpty, !client.awaitsReplication else {
            return client.awaitsReplication
        }
        proposePipeline(of: client, through: replicator)
        return client.awaitsReplication
    }

    /// Takes a request over etcd: a change op that may join the pipeline
    /// joins it; anything else waits for the pipeline to be answered first.
    func handlePipelined(_ request: Request, from client: ClientController, through replicator: ChangeReplicator) {
        if client.awaitsReplication { return client.parked.append(.request(request)) }
        if joinsPipeline(request, of: client) {
            client.pipelined.append(request)
            if client.pipelined.count >= Self.maxPipelinedChanges { proposePipeline(of: client, through: replicator) }
            return
        }
        guard client.pipelined.isEmpty else {
            client.parked.prepend(.request(request))
            return proposePipeline(of: client, through: replicator)
        }
        answerAlone(.alone(request), of: client, through: replicator)
    }

    /// Keeps an error reply behind the changes proposed before it.
    func park(_ failure: ParkedRequest, of client: ClientController) {
        guard let replicator, !client.awaitsReplication else { return client.parked.append(failure) }
        client.parked.prepend(failure)
        proposePipeline(of: client, through: replicator)
    }

    /// A single change op without lifetime or `await` that the client may make.
    private func joinsPipeline(_ request: Request, of client: ClientController) -> Bool {
        switch request.operation {
        case .set, .delete, .insert, .remove, .replace, .add: break
        default: return false
        }
        guard pipelinesChanges, request.lifetime == nil, request.awaiting == nil else { return false }
        do throws(KVOEngineError) {
            try authorize(request.operation, condition: request.condition, for: client)
        } catch {
            return false
        }
        return true
    }

    /// Proposes the client's pipeline as one transaction (a single request as
    /// itself). A request the trial fails is answered alone after the ones
    /// before it; one the store refuses or the race keeps losing, each alone.
    private func proposePipeline(of client: ClientController, through replicator: ChangeReplicator,
                                 attempt: Int = 1) {
        let requests = client.pipelined.removeAll()
        guard requests.count > 1 else {
            if let request = requests.first { handleReplicated(request, from: client, through: replicator) }
            return
        }
        var proposal: BatchProposal, changed: [Bool], sums: [Int?]
        do throws(KVOEngineError) {
            (proposal, changed, sums) = try batchProposal(requests.map {
                ChangeOperation($0.operation, condition: $0.condition)
            })
        } catch {
            // The trial names the op that failed (none named: the first goes alone).
            var failing = 0
            if case .number(let index)? = error.details["index"], let position = index.intValue,
               requests.indices.contains(position) {
                failing = position
            }
            client.parked.prepend(contentsOf: requests[failing...].indices.map {
                $0 == failing ? .alone(requests[$0]) : .request(requests[$0])
            })
            client.pipelined = WaitingRequests(requests[..<failing])
            return failing > 0 ? proposePipeline(of: client, through: replicator) : answerParked(of: client)
        }
        proposal.context.uid = client.credentials?.uid
        client.awaitsReplication = true
        client.replicatingBytes = requests.reduce(0) { $0 + $1.heldBytes }
        replicator.propose(proposal) { [self] outcome in
            client.awaitsReplication = false
            guard !client.isClosed else { return }
            switch outcome {
            case .applied(let seq):
                for (request, (changed, sum)) in zip(requests, zip(changed, sums)) {
                    var reply = ReplyEncoder()
                    if let sum { reply.added(sum, seq: seq) } else { reply.seq(changed ? seq : store.seq) }
                    client.append(reply, id: request.id)
                }
            case .conflict where attempt < Self.maxProposalAttempts:
                client.pipelined = WaitingRequests(requests)
                return proposePipeline(of: client, through: replicator, attempt: attempt + 1)
            case .conflict, .unavailable, .refused:
                // Nothing changed: each is tried alone.
                client.parked.prepend(contentsOf: requests.map { .alone($0) })
            case .unknown(let message):
                // Maybe applied: proposing any of them again could apply it twice, so each is told so.
                client.parked.prepend(contentsOf: requests.map {
                    .failure(id: $0.id, error: KVOEngineError(.unavailable, message))
                })
            }
            answerParked(of: client)
        }
    }

    /// Answers what waited behind a proposal, in order, until a change
    /// awaits its commit again; change requests in a row join a new pipeline.
    func answerParked(of client: ClientController) {
        guard let replicator else { return }
        // A change's wait for its observers (`await`) holds what came after it too.
        while !client.isAwaiting, !client.isClosed, !client.parked.isEmpty {
            let entry = client.parked.removeFirst()
            if case .request(let request) = entry {
                handlePipelined(request, from: client, through: replicator)
            } else if !client.pipelined.isEmpty {
                client.parked.prepend(entry)
                proposePipeline(of: client, through: replicator)
            } else {
                answerAlone(entry, of: client, through: replicator)
            }
        }
        if !client.isAwaiting, !client.isClosed { proposePipeline(of: client, through: replicator) }
    }

    private func answerAlone(_ entry: ParkedRequest, of client: ClientController, through replicator: ChangeReplicator) {
        switch entry {
        case .request(var request), .alone(var request):
            if request.operation.isChange {
                handleReplicated(request, from: client, through: replicator)
            } else {
                answer(&request, from: client)
            }
        case .failure(let id, let error):
            client.append(reply: ReplyEncoder.failure(id: id, error))
        }
    }
}

extension ClientController {
    /// Over etcd, whether a change awaits its commit or requests are held
    /// back: a request read now waits its turn.
    var holdsPipelinedWork: Bool { awaitsReplication || !pipelined.isEmpty || !parked.isEmpty }
}

/// A request held behind a client's pipelined changes over etcd.
enum ParkedRequest {
    /// Handled as if it had just been read: a change op may join a pipeline.
    case request(Request)
    /// Handled by itself: a change op proposed alone.
    case alone(Request)
    /// A line that could not be decoded: its error reply.
    case failure(id: RequestID?, error: KVOEngineError)
}
