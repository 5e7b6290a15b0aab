import Linearizability
import Testing

/// The checker on small register histories whose verdict is known by hand
/// (issue 35 item 7): each violation kvod could commit, each next to the
/// history that differs from it only where the verdict turns.
@Suite struct LinearizabilityCheckerTests {
    typealias H = RegisterHistoryBuilder

    @Test func anEmptyHistoryAndASequentialOneAreLinearizable() {
        #expect(H().verdict() == .linearizable)
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.get(2, 3, value: 1, modSeq: 10)
        history.set(2, 4, 5, condition: .modSeq(10), .applied(seq: 11))
        history.get(6, 7, value: 2, modSeq: 11)
        #expect(history.verdict() == .linearizable)
    }

    @Test func concurrentWritesMayTakeEitherOrderButReadsMustAgreeOnOne() {
        var history = H()
        history.set(1, 0, 10, client: 0, .applied(seq: 10))
        history.set(2, 1, 9, client: 1, .applied(seq: 11))
        history.get(11, 12, client: 2, value: 2)
        #expect(history.verdict() == .linearizable)
        // A read concurrent with both may see either; two later reads that disagree cannot both be right.
        history.get(13, 14, client: 3, value: 1)
        #expect(history.verdict() == .notLinearizable)
    }

    @Test func aStaleReadIsAViolation() {
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.set(2, 2, 3, .applied(seq: 11))
        history.get(4, 5, value: 1)
        #expect(history.verdict() == .notLinearizable)
    }

    @Test func aReadConcurrentWithTheWriteMaySeeTheOldValue() {
        var history = H()
        history.set(1, 0, 10, .applied(seq: 10))
        history.get(2, 3, value: 0, modSeq: 1)
        history.get(4, 5, value: 1, modSeq: 10)
        #expect(history.verdict() == .linearizable)
    }

    @Test func aLostWriteIsAViolation() {
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.get(2, 3, value: 0)
        #expect(history.verdict() == .notLinearizable)
    }

    /// The same value twice, the second time after another write: as a
    /// pipeline sent again op by op (issue 35 item 1) would leave it.
    @Test func aWriteAppliedTwiceIsAViolation() {
        var history = H()
        history.set(1, 0, 1, client: 0, .applied(seq: 10))
        history.set(2, 2, 3, client: 1, .applied(seq: 11))
        history.get(4, 5, value: 1, modSeq: 12)
        #expect(history.verdict() == .notLinearizable)
        // Seen at the seq its write was acknowledged at, it is a stale read: a violation as well.
        var stale = H()
        stale.set(1, 0, 1, client: 0, .applied(seq: 10))
        stale.set(2, 2, 3, client: 1, .applied(seq: 11))
        stale.get(4, 5, value: 1, modSeq: 10)
        #expect(stale.verdict() == .notLinearizable)
    }

    @Test func aReadWithTheWrongModSeqIsAViolation() {
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.get(2, 3, value: 1, modSeq: 9)
        #expect(history.verdict() == .notLinearizable)
    }

    /// Two concurrent writes could take either order, but kvod says which
    /// by their seqs: the one at the higher seq is the one that stays.
    @Test func writesTakeEffectInTheOrderOfTheirSeqs() {
        var history = H()
        history.set(1, 0, 10, client: 0, .applied(seq: 11))
        history.set(2, 1, 9, client: 1, .applied(seq: 10))
        history.get(11, 12, client: 2, value: 1, modSeq: 11)
        #expect(history.verdict() == .linearizable)
        var reversed = H()
        reversed.set(1, 0, 10, client: 0, .applied(seq: 11))
        reversed.set(2, 1, 9, client: 1, .applied(seq: 10))
        reversed.get(11, 12, client: 2, value: 2)
        #expect(reversed.verdict() == .notLinearizable)
    }

    /// A read that says it reflects seq 10 comes after the write at 10, even
    /// when it overlaps it; one that reflects seq 9 comes before it.
    @Test func aReadAtASeqComesAfterTheWritesUpToItAndBeforeThoseAbove() {
        var history = H()
        history.set(1, 0, 10, client: 0, .applied(seq: 10))
        history.get(1, 9, client: 1, value: 0, modSeq: 1, after: 1...9)
        history.get(2, 8, client: 2, value: 1, modSeq: 10, after: 10...10)
        #expect(history.verdict() == .linearizable)
        var claimsTheWrite = H()
        claimsTheWrite.set(1, 0, 10, client: 0, .applied(seq: 10))
        claimsTheWrite.get(1, 9, client: 1, value: 0, modSeq: 1, after: 10...10)
        #expect(claimsTheWrite.verdict() == .notLinearizable)
        var beforeTheWrite = H()
        beforeTheWrite.set(1, 0, 10, client: 0, .applied(seq: 10))
        beforeTheWrite.get(1, 9, client: 1, value: 1, modSeq: 10, after: 1...9)
        #expect(beforeTheWrite.verdict() == .notLinearizable)
    }

    /// Nobody saw an answer, but a read saw the value: only the world where it
    /// was applied explains that read.
    @Test func anUnknownOutcomeThatMustBeTakenAsAppliedIs() {
        var history = H()
        history.set(1, 0, nil, client: 0, nil)
        history.get(2, 3, value: 1)
        history.get(4, 5, value: 1)
        #expect(history.verdict() == .linearizable)
        // Had kvod said that nothing changed, the same reads would be a violation.
        var refused = H()
        refused.set(1, 0, 1, client: 0, .notApplied)
        refused.get(2, 3, value: 1)
        #expect(refused.verdict() == .notLinearizable)
    }

    /// No read ever saw the value: only the world where it was not applied
    /// (or not before the last read) explains the reads.
    @Test func anUnknownOutcomeThatMustBeTakenAsNotAppliedIs() {
        var history = H()
        history.set(1, 0, nil, client: 0, nil)
        history.get(2, 3, value: 0, modSeq: 1)
        history.set(2, 4, 5, client: 2, .applied(seq: 12))
        history.get(6, 7, value: 2, modSeq: 12)
        history.get(8, 9, value: 2, modSeq: 12)
        #expect(history.verdict() == .linearizable)
        // Once a read saw it, it cannot vanish again: applied, then not applied, is no world.
        history.get(10, 11, value: 1)
        history.get(12, 13, value: 2)
        #expect(history.verdict() == .notLinearizable)
    }

    /// A write of unknown outcome leaves its modSeq unknown; the next read tells it, and a condition then holds on it.
    @Test func aModSeqLeftByAnUnknownWriteIsLearntFromTheNextRead() {
        var history = H()
        history.set(1, 0, nil, client: 0, nil)
        history.get(2, 3, value: 1, modSeq: 15)
        history.set(2, 4, 5, client: 1, condition: .modSeq(15), .applied(seq: 16))
        history.set(3, 6, 7, client: 1, condition: .modSeq(15), .conditionFailed)
        #expect(history.verdict() == .linearizable)
        history.get(8, 9, value: 2, modSeq: 15)
        #expect(history.verdict() == .notLinearizable)
    }

    @Test func twoCompareAndSetsOnTheSameValueCannotBothSucceed() {
        var history = H()
        history.set(1, 0, 2, client: 0, condition: .value(0), .applied(seq: 10))
        history.set(2, 1, 3, client: 1, condition: .value(0), .conditionFailed)
        #expect(history.verdict() == .linearizable)
        var both = H()
        both.set(1, 0, 2, client: 0, condition: .value(0), .applied(seq: 10))
        both.set(2, 1, 3, client: 1, condition: .value(0), .applied(seq: 11))
        #expect(both.verdict() == .notLinearizable)
    }

    @Test func aConditionThatFailedWhileItHeldIsAViolation() {
        var history = H()
        history.set(1, 0, 1, client: 0, condition: .modSeq(1), .conditionFailed)
        #expect(history.verdict() == .notLinearizable)
    }

    @Test func aBatchIsSeenWholeOrNotAtAll() {
        var history = H()
        history.batch([RegisterWrite(path: H.a, value: 1), RegisterWrite(path: H.b, value: 2)], 0, 10, .applied(seq: 10))
        history.getAll(1, 2, values: [0, 0])
        history.getAll(3, 4, values: [1, 2])
        #expect(history.verdict() == .linearizable)
        history.getAll(5, 6, client: 2, values: [1, 0])
        #expect(history.verdict() == .notLinearizable)
    }

    @Test func aBatchWhoseConditionFailedChangedNothing() {
        var history = H()
        history.batch([RegisterWrite(path: H.a, value: 1), RegisterWrite(path: H.b, value: 2, condition: .value(7))],
                      0, 1, .conditionFailed)
        history.getAll(2, 3, values: [0, 0])
        #expect(history.verdict() == .linearizable)
        var applied = H()
        applied.batch([RegisterWrite(path: H.a, value: 1), RegisterWrite(path: H.b, value: 2, condition: .value(7))],
                      0, 1, .conditionFailed)
        applied.getAll(2, 3, values: [1, 0])
        #expect(applied.verdict() == .notLinearizable)
    }

    /// Forty reads concurrent with one write, the twenty called first seeing
    /// its value and the twenty called later the old one: only the order old
    /// reads, write, new reads fits. A read fits where the search stands or
    /// nowhere better, so the search does not try each subset of the new reads
    /// before the write (2^20 of them): a few hundred states, not the bound.
    @Test func readsConcurrentWithAWriteAreNotTriedInEverySubset() {
        var history = H()
        history.set(1, 0, 100, client: 0, .applied(seq: 10))
        for index in 1...20 { history.get(Double(index), 100 + Double(index), client: index, value: 1, modSeq: 10) }
        for index in 21...40 { history.get(Double(index), 100 + Double(index), client: index, value: 0, modSeq: 1) }
        let result = H.checker(maxStates: 100_000).check(history.operations)
        #expect(result.verdict == .linearizable)
        #expect(result.states < 1_000, "\(result.states) states")
        // One read of a value nobody wrote: no order fits, and the search says so as quickly.
        history.get(200, 201, client: 41, value: 7)
        let violation = H.checker(maxStates: 100_000).check(history.operations)
        #expect(violation.verdict == .notLinearizable)
        #expect(violation.states < 1_000, "\(violation.states) states")
    }

    /// Twenty writes of unknown outcome, all concurrent, and a read of a
    /// value none wrote: the search would try every subset of them. It stops
    /// at its bound and says so, in well under a second.
    @Test func aSearchPastItsBoundSaysUnknownInsteadOfRunningOn() {
        var history = H()
        for value in 1...20 { history.set(value, 0, nil, client: value, nil) }
        history.get(1, 2, client: 0, value: 999)
        let clock = ContinuousClock()
        let start = clock.now
        let result = H.checker(maxStates: 5_000).check(history.operations)
        #expect(result.verdict == .unknown)
        #expect(result.states <= 5_001)
        #expect(clock.now - start < .seconds(5))
    }

    /// A write at a lower seq called after one at a higher seq, 12 writes of
    /// unknown outcome before its answer: the plain search tries the 12 in
    /// each world before that answer tells it the order was wrong; with the
    /// seq known never to fit, it turns back at once.
    @Test func aWriteBelowTheLastSeqEndsTheOrderAtOnce() {
        var history = H()
        history.set(1, 0, 50, client: 0, .applied(seq: 100))
        history.set(2, 0.5, 50, client: 1, .applied(seq: 99))
        for value in 3..<15 { history.set(value, Double(value), nil, path: H.b, client: value, nil) }
        history.get(60, 61, client: 30, value: 1, modSeq: 100)
        let plain = LinearizabilityChecker(model: PlainModel(model: H.model)).check(history.operations)
        let pruned = H.checker().check(history.operations)
        #expect(plain.verdict == .linearizable && pruned.verdict == .linearizable)
        #expect(plain.states > 5_000 && pruned.states < 100, "\(plain.states) states, \(pruned.states) pruned")
        print("aWriteBelowTheLastSeqEndsTheOrderAtOnce: \(plain.states) states, \(pruned.states) pruned")
    }

    /// A conditional write at the seq just applied (one `Txn`) is not "below
    /// it": a later write at that seq may still make its condition hold.
    @Test func aWriteAtTheLastSeqStillFits() {
        var history = H()
        history.set(5, 0, 0.15, path: H.b, client: 0, .applied(seq: 10))
        history.set(2, 0.1, 5, client: 1, condition: .value(1), .applied(seq: 10))
        history.set(1, 0.2, 5, client: 2, .applied(seq: 10))
        #expect(history.verdict() == .linearizable)
    }
}
