import Linearizability
import Testing

/// A history cut where nothing is in flight (``QuiescentSegments``) and
/// searched segment by segment (``SegmentedChecker``): each test holds a
/// history whose verdict turns if the cut were made wrong (the state not
/// carried, one end state of several carried, a cut across an operation
/// still in flight).
@Suite struct SegmentedCheckerTests {
    typealias H = RegisterHistoryBuilder

    static func segmented(maxStates: Int = 1_000_000) -> SegmentedChecker<KeyPathRegisterModel> {
        SegmentedChecker(checker: H.checker(maxStates: maxStates))
    }

    @Test func theStateAtACutIsCarriedToTheNextSegment() {
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.get(2, 3, value: 1, modSeq: 10)
        let result = Self.segmented().check(history.operations)
        #expect(result.cuts == 1 && result.searched == 2 && result.told == 1)
        #expect(result.verdict == .linearizable)
        // The second segment alone, from the first state, is not: the cut needs the state carried.
        #expect(H.checker().check([history.operations[1]]).verdict == .notLinearizable)

        // And a write lost across the cut: each segment alone from the first state would pass.
        var lost = H()
        lost.set(1, 0, 1, .applied(seq: 10))
        lost.get(2, 3, value: 0, modSeq: 1)
        let violation = Self.segmented().check(lost.operations)
        #expect(violation.cuts == 1)
        #expect(violation.verdict == .notLinearizable)
        #expect(violation.segment == [1] && violation.stuckOperation == 1)
        #expect(H.checker().check([lost.operations[1]]).verdict == .linearizable)
    }

    /// Two sets committed in one `Txn` share a seq and may take either order:
    /// the first segment may end with either value (the model cannot tell which:
    /// both are searched for), and a read after the cut may see either (not the
    /// value before them).
    @Test func everyStateASegmentMayEndInIsCarried() {
        for (seen, verdict) in [(1, LinearizabilityResult.Verdict.linearizable), (2, .linearizable), (0, .notLinearizable)] {
            var history = H()
            history.set(1, 0, 2, client: 0, .applied(seq: 10))
            history.set(2, 1, 3, client: 1, .applied(seq: 10))
            history.get(4, 5, client: 2, value: seen, modSeq: seen == 0 ? 1 : 10)
            let result = Self.segmented().check(history.operations)
            #expect(result.cuts == 1 && result.joined == 0)
            #expect(result.verdict == verdict, "read \(seen)")
            #expect(result.mostCarried == 2 && result.told == 0)
        }
    }

    /// Four segments, the second not linearizable (two compare-and-sets on
    /// one value both succeed): found, and reported in its segment.
    @Test func aViolationInsideALaterSegmentIsFound() {
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.set(2, 10, 13, client: 0, condition: .value(1), .applied(seq: 11))
        history.set(3, 11, 12, client: 1, condition: .value(1), .applied(seq: 12))
        history.set(4, 20, 21, .applied(seq: 13))
        history.get(22, 23, value: 4, modSeq: 13)
        let result = Self.segmented().check(history.operations)
        #expect(result.cuts == 3)
        #expect(result.verdict == .notLinearizable)
        #expect(result.segment == [1, 2])
        #expect(result.stuckOperation.map { [1, 2].contains($0) } == true)
        #expect(H.checker().check(history.operations).verdict == .notLinearizable)
        // With the second condition on the value the first wrote, it is.
        var fixed = H()
        fixed.set(1, 0, 1, .applied(seq: 10))
        fixed.set(2, 10, 13, client: 0, condition: .value(1), .applied(seq: 11))
        fixed.set(3, 11, 12, client: 1, condition: .value(2), .applied(seq: 12))
        fixed.set(4, 20, 21, .applied(seq: 13))
        fixed.get(22, 23, value: 4, modSeq: 13)
        #expect(Self.segmented().check(fixed.operations).verdict == .linearizable)
    }

    /// A write of unknown outcome may take effect after any later point: here
    /// only after the first read. A cut after the set (as if it were done by
    /// then) would leave no world for the second read.
    @Test func anOperationOfUnknownOutcomeIsNotCutAcross() {
        var history = H()
        history.set(1, 0, nil, client: 0, nil)
        history.set(2, 1, 2, client: 1, .applied(seq: 11))
        history.get(3, 4, client: 2, value: 2, modSeq: 11)
        history.get(5, 6, client: 2, value: 1)
        let result = Self.segmented().check(history.operations)
        #expect(result.cuts == 0 && result.afterUnknown == 4)
        #expect(result.verdict == .linearizable)
        // The cut the unknown write forbids, at 2.5: carried, the segment's end states do not fit the rest.
        let checker = H.checker()
        let (_, ends) = checker.endStates(Array(history.operations[0...1]), from: [H.model.initialState])
        #expect(checker.check(Array(history.operations[2...3]), from: Array(ends)).verdict == .notLinearizable)
    }

    /// An answer at the very time of another call: the two are concurrent (as the
    /// checker takes them), so no cut between them, and the read may come first.
    @Test func touchingIntervalsAreNotCut() {
        var history = H()
        history.set(1, 0, 1, .applied(seq: 10))
        history.get(1, 2, value: 0, modSeq: 1)
        let result = Self.segmented().check(history.operations)
        #expect(result.cuts == 0)
        #expect(result.verdict == .linearizable)
    }

    /// 200 writes and reads one after another: past a bound of 50 states as
    /// one search, a few states a segment.
    @Test func theBoundHoldsPerSegment() {
        var history = H()
        for value in 1...100 {
            let time = Double(value) * 10
            history.set(value, time, time + 1, client: 0, .applied(seq: 10 + value))
            history.get(time + 2, time + 3, client: 1, value: value, modSeq: 10 + value)
        }
        #expect(H.checker(maxStates: 50).check(history.operations).verdict == .unknown)
        let result = Self.segmented(maxStates: 50).check(history.operations)
        #expect(result.verdict == .linearizable)
        #expect(result.searched == 200 && result.mostStates <= 3)
    }

    /// Small random histories of sets, compare-and-sets at shared seqs, unknown
    /// outcomes and reads (some of an old value), some with gaps to cut at: the
    /// segmented verdict, with the model's shortcuts, is the plain whole
    /// search's, every time.
    @Test func segmentedAndWholeSearchesAgree() {
        var random = UInt64(0x5EED)
        func next(_ bound: Int) -> Int {
            random &+= 0x9E37_79B9_7F4A_7C15
            var z = random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
        var verdicts: [LinearizabilityResult.Verdict: Int] = [:]
        var cut = 0, told = 0
        for _ in 0..<400 {
            var history = H()
            var time = 0.0, seq = 1, value = 0
            var written = [[0], [0]]  // each key path's values so far
            for _ in 0..<(6 + next(8)) {
                time += Double(next(3))  // 0: overlaps the last operation, 2: often a gap to cut at
                let duration = 1 + Double(next(3))
                let path = next(2)
                // Mostly the last value written there, at times an older one.
                let recent = next(3) == 0 ? written[path][next(written[path].count)] : written[path].last!
                switch next(4) {
                case 0, 1:
                    value += 1
                    seq += next(2)  // 0: the same seq as the last write, as one `Txn`
                    let condition: RegisterCondition? = next(3) == 0 ? .value(recent) : nil
                    let output: RegisterOutput? = switch next(6) {
                    case 0: nil
                    case 1: .conditionFailed
                    default: .applied(seq: seq)
                    }
                    history.set(value, time, output == nil ? nil : time + duration, path: path, client: next(4),
                                condition: condition, output)
                    if output != .conditionFailed { written[path].append(value) }
                default:
                    history.get(time, time + duration, path: path, client: next(4), value: recent)
                }
            }
            let whole = LinearizabilityChecker(model: PlainModel(model: H.model)).check(history.operations).verdict
            let result = Self.segmented().check(history.operations)
            #expect(result.verdict == whole, "\(HistoryReport.lines(Array(history.operations.indices), of: history.operations, model: H.model, origin: 0).joined(separator: "\n"))")
            verdicts[whole, default: 0] += 1
            // Where the model tells the end state without a search, it is the one every order that fits ends in.
            if let end = H.model.endState(of: history.operations, from: H.model.initialState) {
                let (found, ends) = H.checker().endStates(history.operations, from: [H.model.initialState])
                #expect(found.verdict != .linearizable || ends == [end], "\(ends) \(end)")
                if found.verdict == .linearizable { told += 1 }
            }
            if result.cuts > 0 { cut += 1 }
        }
        // The mix is worth something: both verdicts, and cuts in many.
        #expect(verdicts[.linearizable, default: 0] >= 40 && verdicts[.notLinearizable, default: 0] >= 40, "\(verdicts)")
        #expect(cut >= 100 && told >= 25, "\(cut) cut, \(told) end states told")
        print("segmentedAndWholeSearchesAgree: \(verdicts), \(cut) cut, \(told) end states told")
    }
}
