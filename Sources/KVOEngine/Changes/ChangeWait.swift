import KVOProtocol
import KVOValues

/// One writer's reply that waits (`await` on a change): for its change's
/// events to reach the kernel on every observer's connection (`written`),
/// or for every matching ack observation's connection to ack its seq
/// (`acknowledged`), until ``deadline`` at the latest.
///
/// Each observer connection holds a ``ChangeWait/Part`` of it: how many of
/// the observations waited for are its own, and the output position or seq
/// that satisfies them. A wait is finished once no part is outstanding, at
/// its deadline, or when its writer goes; a finished wait takes its parts
/// back from the connections that still hold them, so a connection that
/// never acks keeps no part beyond the wait's life.
final class ChangeWait {
    /// What a connection holds of a wait: `count` observations, satisfied
    /// once its output reaches the kernel up to `mark` (`written`) or it acks
    /// `mark` (`acknowledged`).
    struct Part {
        let wait: ChangeWait
        let mark: UInt64
        let count: Int
    }

    let writer: ClientController
    let id: RequestID?
    /// The ok reply as it will be sent, without `observers` and `acknowledged`.
    let reply: ReplyEncoder
    /// The seq of the change (a batch's last): what `acknowledged` waits for.
    let seq: UInt64
    let awaiting: ChangeAwait
    /// When it times out, on the engine's monotonic clock (ms).
    let deadline: UInt64
    /// The matching observations waited for (`observers`).
    private(set) var observers = 0
    /// Those of them satisfied (`acknowledged`).
    private(set) var satisfied = 0
    /// Those neither satisfied nor gone yet.
    private var outstanding = 0
    /// The connections that hold a part of it.
    private var holders: [ClientController] = []
    private(set) var isFinished = false
    /// Runs once the reply went (over etcd: what the writer sent after its change is answered then).
    var then: (() -> Void)?

    init(writer: ClientController, id: RequestID?, reply: ReplyEncoder, seq: UInt64, awaiting: ChangeAwait,
         deadline: UInt64) {
        self.writer = writer
        self.id = id
        self.reply = reply
        self.seq = seq
        self.awaiting = awaiting
        self.deadline = deadline
    }

    /// Counts `count` observations of `holder` as waited for and gives it a
    /// part for those that are not settled already.
    func add(_ count: Int, of holder: ClientController, mark: UInt64, settled: Int) {
        observers += count
        let waiting = count - settled
        guard waiting > 0 else { return }
        outstanding += waiting
        holders.append(holder)
        holder.hold(Part(wait: self, mark: mark, count: waiting), for: awaiting.condition)
    }

    /// Whether nothing is left to wait for.
    var isSettled: Bool { outstanding == 0 }

    /// A part is over: its observations were satisfied, or their connection went.
    func settle(_ part: Part, satisfied: Bool) {
        guard !isFinished else { return }
        outstanding -= part.count
        if satisfied { self.satisfied += part.count }
        if outstanding == 0 { writer.shared.awaitSchedule.finish(self, timedOut: false) }
    }

    /// Ends it: the reply (ok, or `timeout` with the same counts) goes to the
    /// writer, and the parts still held are taken back.
    func finish(timedOut: Bool) {
        guard !isFinished else { return }
        isFinished = true
        for holder in holders { holder.dropParts(of: self) }
        holders = []
        writer.endAwaiting(self, reply: replyBytes(timedOut: timedOut))
        let then = self.then
        self.then = nil
        then?()
    }

    private func replyBytes(timedOut: Bool) -> [UInt8] {
        let counts = JSONObject([
            KVOProtocol.Field.seq: .number(JSONNumber(validatedLiteral: String(seq))),
            .observers: .number(JSONNumber(observers)),
            .acknowledged: .number(JSONNumber(satisfied)),
        ])
        guard timedOut else {
            var reply = reply
            reply.field(.observers, integer: observers)
            reply.field(.acknowledged, integer: satisfied)
            return reply.finish(id: id)
        }
        let missing = observers - satisfied
        let what = awaiting.condition == .written ? "were not written to" : "did not acknowledge"
        let error = KVOEngineError(
            .timeout, "\(missing) of \(observers) observers \(what) seq \(seq) within \(awaiting.timeout) ms "
                + "(awaitTimeout); the change is applied", details: counts)
        return ReplyEncoder.failure(id: id, error)
    }
}

/// The waits not finished yet, for their deadlines: the daemon asks for the
/// next one and says when it is reached (the engine has no clock of its own).
/// At most one per connection (a waiting connection reads no request).
final class AwaitSchedule {
    private(set) var waits: [ObjectIdentifier: ChangeWait] = [:]
    /// Read once per loop pass by the daemon: kept rather than searched.
    private(set) var nextDeadline: UInt64?

    func add(_ wait: ChangeWait) {
        waits[ObjectIdentifier(wait)] = wait
        nextDeadline = min(nextDeadline ?? wait.deadline, wait.deadline)
    }

    /// Finishes a wait and forgets it.
    func finish(_ wait: ChangeWait, timedOut: Bool) {
        guard waits.removeValue(forKey: ObjectIdentifier(wait)) != nil else { return }
        if nextDeadline == wait.deadline { nextDeadline = waits.values.map(\.deadline).min() }
        wait.finish(timedOut: timedOut)
    }

    /// Finishes every wait due at `now` with `timeout`.
    func expire(at now: UInt64) {
        guard let next = nextDeadline, next <= now else { return }
        for wait in waits.values.filter({ $0.deadline <= now }) { finish(wait, timedOut: true) }
    }
}
