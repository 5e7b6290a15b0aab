/// Registers observations: every connection sends all its observe
/// (`SUBSCRIBE`) requests at once, pipelined, and the clock runs until the
/// last reply is in.
enum Registration {
    /// Sends `requests(i)` on connection i, waits for `count(i)` replies on each.
    /// Returns the seconds it took.
    static func run(_ connections: [Connection], requests: (Int) -> [UInt8], count: (Int) -> Int,
                    timeoutSeconds: Double = 120) throws(BenchError) -> Double {
        let poller = Poller()
        let started = monotonicNanoseconds()
        var expected = 0
        for (index, connection) in connections.enumerated() {
            poller.add(connection)
            connection.send(requests(index))
            poller.updateInterest(connection)
            expected += count(index)
        }
        let deadline = started + UInt64(timeoutSeconds * 1e9)
        var waiting = connections.count
        var done = [Bool](repeating: false, count: connections.count)
        while waiting > 0 {
            poller.poll(timeoutMilliseconds: 5)
            waiting = 0
            for (index, connection) in connections.enumerated() where !done[index] {
                if let problem = connection.problem { throw BenchError("registering: \(problem)") }
                if connection.replies >= count(index) { done[index] = true } else { waiting += 1 }
            }
            if monotonicNanoseconds() > deadline {
                throw BenchError("registering: \(waiting) connection(s) still waiting after \(timeoutSeconds) s")
            }
        }
        return Double(monotonicNanoseconds() - started) / 1e9
    }
}
