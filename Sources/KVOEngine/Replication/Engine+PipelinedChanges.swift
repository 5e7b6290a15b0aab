/// Pipelined change ops over etcd (docs/CLUSTER.md, "Pipelined changes"): the
/// change requests a client sent in a row, read together, are proposed as one
/// transaction through the batch machinery (one revision; every kvod replays
/// the ops in order, each with its own events), with other clients' read in
/// the same loop turn (Engine+GroupedPipelines), and each gets its own reply,
/// in request order. An op that would fail is answered alone, against the
/// state the ops before it leave, as if it had been sent by itself.
extension Engine {
    /// The most change requests of one client proposed as one transaction:
    /// 64 objects' documents and records fill etcd's default 128 `Txn`
    /// operations (fewer when the store allows fewer: ``pipelineCapacity(_:)``).
    public static let maxPipelinedChanges = 64

    /// Ends what the daemon read from `client`: the change requests it sent
    /// in a row wait for the loop turn's end (``proposeQueuedPipelines()``).
    /// Returns whether the client now awaits its changes (read nothing more
    /// from it until they are answered).
    public func queuePipelinedChanges(of client: ClientController) -> Bool {
        if replicator != nil, !client.pipelined.isEmpty, !client.awaitsReplication { proposals.queuePipeline(of: client) }
        return client.awaitsReplication || client.pipelineQueued
    }

    /// Takes a request over etcd: a change op that may join the pipeline
    /// joins it; anything else waits for the pipeline to be answered first.
    func handlePipelined(_ request: Request, from client: ClientController, through replicator: ChangeReplicator) {
        if client.awaitsReplication || client.pipelineQueued { return client.parked.append(.request(request)) }
        if joinsPipeline(request, of: client) {
            client.pipelined.append(request)
            if client.pipelined.count >= pipelineCapacity(replicator) { proposals.queuePipeline(of: client) }
            return
        }
        guard client.pipelined.isEmpty else {
            client.parked.prepend(.request(request))
            return proposals.queuePipeline(of: client)
        }
        answerAlone(.alone(request), of: client, through: replicator)
    }

    /// Keeps an error reply behind the changes proposed before it.
    func park(_ failure: ParkedRequest, of client: ClientController) {
        guard replicator != nil, !client.awaitsReplication, !client.pipelineQueued else {
            return client.parked.append(failure)
        }
        client.parked.prepend(failure)
        proposals.queuePipeline(of: client)
    }

    /// The most requests of one client's pipeline: as many as the store's
    /// transaction takes objects, each request naming one.
    func pipelineCapacity(_ replicator: ChangeReplicator) -> Int {
        max(1, min(Self.maxPipelinedChanges, replicator.maxObjectsPerProposal))
    }

    /// A single change op without lifetime or `await` that the client may make.
    private func joinsPipeline(_ request: Request, of client: ClientController) -> Bool {
        guard request.operation.spec.batchable, pipelinesChanges, request.lifetime == nil, request.awaiting == nil else {
            return false
        }
        do throws(KVOEngineError) {
            try authorize(request.operation, condition: request.condition, for: client)
        } catch {
            return false
        }
        return true
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
                proposals.queuePipeline(of: client)
            } else {
                answerAlone(entry, of: client, through: replicator)
            }
        }
        if !client.isAwaiting, !client.isClosed, !client.pipelined.isEmpty { proposals.queuePipeline(of: client) }
    }

    private func answerAlone(_ entry: ParkedRequest, of client: ClientController, through replicator: ChangeReplicator) {
        switch entry {
        case .request(var request), .alone(var request):
            if request.operation.spec.replicated {
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
    /// back (a pipeline queued or being read): a request read now waits its turn.
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
