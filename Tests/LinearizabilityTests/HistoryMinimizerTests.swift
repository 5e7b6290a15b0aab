import Linearizability
import Testing

/// The minimal part of a violation that a failure prints.
@Suite struct HistoryMinimizerTests {
    typealias H = RegisterHistoryBuilder

    /// 200 sequential writes and reads of their values, one stale read in
    /// the middle: the part left is that read and the two writes it
    /// contradicts, nothing else.
    @Test func aStaleReadAmongHundredsOfOperationsIsCutDownToItAndTheWritesItContradicts() {
        var history = H()
        var time = 0.0
        for value in 1...100 {
            history.set(value, time, time + 1, client: 0, .applied(seq: 10 + value))
            history.get(time + 2, time + 3, client: 1, value: value, modSeq: 10 + value)
            if value == 60 { history.get(time + 4, time + 5, client: 2, value: 58, modSeq: 68) }
            time += 6
        }
        let checker = H.checker()
        let result = checker.check(history.operations)
        #expect(result.verdict == .notLinearizable)
        let part = HistoryMinimizer(checker: checker).minimize(history.operations, stuck: result.stuckOperation)
        #expect(checker.check(part.map { history.operations[$0] }).verdict == .notLinearizable)
        let lines = HistoryReport.lines(part, of: history.operations, model: H.model, origin: 0)
        #expect(part.count <= 3, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("get a -> v58 modSeq 68") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("set a=v58 -> ok seq 68") }, "\(lines.joined(separator: "\n"))")
    }
}
