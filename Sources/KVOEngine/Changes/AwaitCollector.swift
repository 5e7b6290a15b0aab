/// The observations one change with `await` is due to reach, gathered while
/// it is dispatched (``SharedController/awaitCollector``), by client: what
/// its ``ChangeWait`` then waits for.
final class AwaitCollector {
    struct Due {
        let client: ClientController
        /// Observations that were sent (or held for) an event of the change.
        var sent: Set<ObjectIdentifier> = []
        /// Observations whose event was folded into a throttle interval.
        var folded: Set<ObjectIdentifier> = []
    }

    let writer: ClientController
    let condition: ChangeAwait.Condition
    private(set) var due: [ObjectIdentifier: Due] = [:]
    /// Clients in the order they were first met, for a stable part order.
    private(set) var order: [ObjectIdentifier] = []

    init(writer: ClientController, condition: ChangeAwait.Condition) {
        self.writer = writer
        self.condition = condition
    }

    /// `info` is due an event of the change; `folded`: it was folded, not sent.
    func note(_ info: ObservationInfo, folded: Bool) {
        let client = info.owner
        // The writer reads nothing while it waits, so it could not ack.
        if condition == .acknowledged, !info.filter.acknowledges || client === writer { return }
        let key = ObjectIdentifier(client)
        if due[key] == nil {
            due[key] = Due(client: client)
            order.append(key)
        }
        if folded {
            due[key]!.folded.insert(ObjectIdentifier(info))
        } else {
            due[key]!.sent.insert(ObjectIdentifier(info))
        }
    }

    /// Gives `wait` its parts: one per client, for its observations not
    /// settled already (gone, or folded for `written`).
    func fill(_ wait: ChangeWait) {
        for key in order {
            let entry = due[key]!
            let client = entry.client
            let count = entry.sent.union(entry.folded).count
            let gone = client.isClosed || client.disconnectReason != nil
            switch condition {
            case .written:
                // A congested client's events are held or folded: not written.
                let settled = gone || client.isCongested ? count : count - entry.sent.count
                wait.add(count, of: client, mark: client.outputEnd, settled: settled)
            case .acknowledged:
                wait.add(count, of: client, mark: wait.seq, settled: gone ? count : 0)
            }
        }
    }
}
