/// The parts of writers' waits that one client holds (``ChangeWait/Part``),
/// oldest first: marks grow with time, so the satisfied ones are a prefix.
final class WaitParts {
    var written: [ChangeWait.Part] = []
    var acknowledged: [ChangeWait.Part] = []
}

/// Acknowledgements and `await` (issue 15), on the side of a client: as an
/// observer, it holds parts of writers' waits, satisfied as its output
/// reaches the kernel or as it acks; as a writer, it has at most one change
/// whose reply waits.
extension ClientController {
    /// Where the end of ``output`` lies in the client's stream: the mark an
    /// event just appended is written once the kernel has taken.
    var outputEnd: UInt64 { outputBytesTaken + UInt64(output.count) }

    /// The daemon is about to take all of ``output``: counts it, so that
    /// output positions stay comparable with what it reports to the kernel.
    public func noteOutputTaken() {
        outputBytesTaken += UInt64(output.count)
    }

    /// The daemon handed the client's stream to the kernel up to `position`
    /// (bytes since the client connected, ``outputBytesTaken`` minus what
    /// still waits): the waits for events written up to there are satisfied.
    public func outputReachedKernel(upTo position: UInt64) {
        guard let parts = waitParts, let first = parts.written.first?.mark, first <= position else { return }
        let done = parts.written.prefix { $0.mark <= position }
        parts.written.removeFirst(done.count)
        for part in done { part.wait.settle(part, satisfied: true) }
    }

    /// Whether some writer waits for this client's output to reach the kernel.
    public var hasWrittenWaits: Bool { !(waitParts?.written.isEmpty ?? true) }

    /// Whether this client's last change waits for its reply (`await`, or
    /// over etcd its commit, or its turn to be proposed), or its `backup` for
    /// the snapshot: the daemon reads no further request from it meanwhile.
    public var isAwaiting: Bool { pendingWait != nil || awaitsReplication || pipelineQueued || awaitedBackup != nil }

    /// Records an ack: acks are cumulative, a lower one changes nothing.
    func acknowledge(_ seq: UInt64) {
        guard seq > ackedSeq else { return }
        ackedSeq = seq
        guard let parts = waitParts, let first = parts.acknowledged.first?.mark, first <= seq else { return }
        let done = parts.acknowledged.prefix { $0.mark <= seq }
        parts.acknowledged.removeFirst(done.count)
        for part in done { part.wait.settle(part, satisfied: true) }
    }

    func hold(_ part: ChangeWait.Part, for condition: ChangeAwait.Condition) {
        let parts = waitParts ?? WaitParts()
        waitParts = parts
        switch condition {
        case .written: parts.written.append(part)
        case .acknowledged: parts.acknowledged.append(part)
        }
    }

    /// Takes back the parts of a finished wait.
    func dropParts(of wait: ChangeWait) {
        guard let parts = waitParts else { return }
        parts.written.removeAll { $0.wait === wait }
        parts.acknowledged.removeAll { $0.wait === wait }
        if parts.written.isEmpty && parts.acknowledged.isEmpty { waitParts = nil }
    }

    /// The writer's wait finished: its reply goes out, and it may be read again.
    func endAwaiting(_ wait: ChangeWait, reply: [UInt8]) {
        guard pendingWait === wait else { return }
        pendingWait = nil
        // Over etcd the change's outcome may still be on its way: the reply goes with it, so
        // that the daemon, which reads again once a reply went, does not wait for an outcome
        // that brings no output.
        if awaitsReplication { return replyAfterOutcome = reply }
        append(reply: reply)
    }

    /// The client closes: the waits it holds parts of go on without it (not
    /// counted as satisfied), and its own wait ends.
    func endWaits() {
        if let parts = waitParts {
            waitParts = nil
            for part in parts.written + parts.acknowledged { part.wait.settle(part, satisfied: false) }
        }
        if let wait = pendingWait { shared.awaitSchedule.finish(wait, timedOut: false) }
    }
}
