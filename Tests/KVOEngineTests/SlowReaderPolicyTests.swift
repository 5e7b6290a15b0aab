import Testing
@testable import KVOEngine

/// The slow-reader policy's decisions, without a client or a clock: loop
/// times are numbers fed in.
@Suite struct SlowReaderPolicyTests {
    static let limits = OutputLimits(hardBytes: 1000, softBytes: 100, softMilliseconds: 50)

    @Test func anEventWhileCongestedIsHeldDroppedOrEndsTheClientByItsObservationsPolicy() {
        #expect(SlowReaderPolicy.fate(of: .coalesce, isPrior: false) == .hold)
        #expect(SlowReaderPolicy.fate(of: .coalesce, isPrior: true) == .drop)
        #expect(SlowReaderPolicy.fate(of: .disconnect, isPrior: false) == .disconnect)
        #expect(SlowReaderPolicy.fate(of: .disconnect, isPrior: true) == .disconnect)
    }

    @Test func outputOverflowsOnlyPastItsAllowance() {
        #expect(!SlowReaderPolicy.overflows(10_000, allowance: nil), "no allowance: no limit")
        #expect(!SlowReaderPolicy.overflows(100, allowance: 100))
        #expect(SlowReaderPolicy.overflows(101, allowance: 100))
    }

    @Test func theAllowanceIsTheHardLimitLessWhatIsQueuedAndNeverNegative() {
        let policy = SlowReaderPolicy(limits: Self.limits)
        #expect(policy.allowance(queuedBytes: 0) == 1000)
        #expect(policy.allowance(queuedBytes: 400) == 600)
        #expect(policy.allowance(queuedBytes: 5000) == 0)
    }

    @Test func requestsAreReadUntilPendingOutputPassesTheHardLimit() {
        let policy = SlowReaderPolicy(limits: Self.limits)
        #expect(policy.readsRequests(pendingBytes: 1000))
        #expect(!policy.readsRequests(pendingBytes: 1001))
    }

    @Test func queuedOutputOverTheSoftLimitCongestsOnceItStaysThereForThePeriod() {
        var policy = SlowReaderPolicy(limits: Self.limits)
        let verdicts = [(101, 1000), (500, 1049), (101, 1050), (900, 2000)].map { policy.noteQueued($0, now: $1) }
        #expect(verdicts == [false, false, true, true], "congested from 50 ms over the soft limit on")
        #expect(policy.overSoftLimitSince == 1000)
    }

    @Test func droppingUnderTheSoftLimitRestartsThePeriod() {
        var policy = SlowReaderPolicy(limits: Self.limits)
        let before = [(200, 0), (100, 40)].map { policy.noteQueued($0, now: $1) }
        #expect(before == [false, false], "at the limit is not over it")
        #expect(policy.overSoftLimitSince == nil)
        let after = [(200, 60), (200, 100), (200, 110)].map { policy.noteQueued($0, now: $1) }
        #expect(after == [false, false, true], "a new period started at 60")
    }
}
