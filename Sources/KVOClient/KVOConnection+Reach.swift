/// Waiting until kvod, as this connection sees it, has reached a seq.
extension KVOConnection {
    /// Returns once a reply on this connection says kvod's seq is at least
    /// `seq`: by then every event of the changes up to it that kvod sends
    /// this connection has been read and handed to its observers (kvod writes
    /// them before any later reply). Asks again while kvod is behind (over
    /// etcd), for at most the request timeout.
    func reach(_ seq: UInt64) async throws(KVOClientError) {
        let clock = ContinuousClock()
        let deadline = core.configuration.requestTimeout.map { clock.now + $0 }
        var pause = Duration.milliseconds(1)
        while true {
            let current = try await info().seq
            if current >= seq { return }
            if let deadline, clock.now + pause > deadline {
                throw KVOClientError(.timedOut, "kvod is at seq \(current) and did not reach \(seq) in time")
            }
            if Task.isCancelled {
                throw KVOClientError(.timedOut, "cancelled while kvod is at seq \(current), before \(seq)")
            }
            // Nothing on this connection says when another kvod's change arrives here: ask again, less often.
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(100))
        }
    }
}
