import KVODCore
import Testing

/// `--max-client-memory`'s arithmetic: the sum follows every report, and over
/// the budget the connections holding at least their share go first.
@Suite struct ClientMemoryBudgetTests {
    @Test func theTotalFollowsReportsAndClosedConnectionsLeaveIt() {
        var budget = ClientMemoryBudget(limit: 0)
        var (r1, r2) = (ClientMemoryBudget.Report(), ClientMemoryBudget.Report())
        let went1 = budget.report(100, replacing: &r1)
        #expect(!went1)
        let went2 = budget.report(50, replacing: &r2)
        #expect(!went2)
        let went3 = budget.report(30, replacing: &r1)
        #expect(!went3)
        #expect(budget.total == 80 && budget.peak == 150)
        let went4 = budget.report(0, replacing: &r1)
        #expect(!went4)
        let went5 = budget.report(0, replacing: &r2)
        #expect(!went5)
        #expect(budget.total == 0 && budget.congestions == 0)
    }

    @Test func overTheBudgetTheLargestGoesAndSmallOnesDoNot() {
        var budget = ClientMemoryBudget(limit: 1_000)
        var (r1, r2, r3, r4) = (ClientMemoryBudget.Report(), ClientMemoryBudget.Report(), ClientMemoryBudget.Report(),
                                ClientMemoryBudget.Report())
        let went6 = budget.report(400, replacing: &r1)
        #expect(!went6)
        let went7 = budget.report(100, replacing: &r2)
        #expect(!went7)
        let went8 = budget.report(450, replacing: &r3)
        #expect(!went8)
        // Over now: 1,050 > 1,000. A share is 1,000 / 4 = 250.
        let went9 = budget.report(100, replacing: &r4)
        #expect(!went9, "a small holder is left alone")
        let went10 = budget.report(460, replacing: &r3)
        #expect(went10, "the largest goes to its policy")
        let went11 = budget.report(400, replacing: &r1)
        #expect(went11)
        let went12 = budget.report(120, replacing: &r2)
        #expect(!went12)
        #expect(budget.congestions == 2)
        // Under again: nobody goes.
        let went13 = budget.report(0, replacing: &r3)
        #expect(!went13)
        let went14 = budget.report(600, replacing: &r1)
        #expect(!went14)
    }

    @Test func theDefaultIsAQuarterOfMaxMemoryOrAnEighthOfTheMachineAndAtLeastTheFloor() {
        #expect(ClientMemoryBudget.defaultLimit(maxMemory: 1 << 30, physicalBytes: 64 << 30, floor: 32 << 20) == 256 << 20)
        #expect(ClientMemoryBudget.defaultLimit(maxMemory: 0, physicalBytes: 16 << 30, floor: 32 << 20) == 2 << 30)
        #expect(ClientMemoryBudget.defaultLimit(maxMemory: 64 << 20, physicalBytes: 16 << 30, floor: 32 << 20) == 32 << 20)
    }
}

/// Which connection the budget disconnects while others wait for its room.
struct ClientMemoryEvicteeTests {
    struct Holder { let name: String; let bytes: Int; let unreadSince: UInt64? }

    static func evictee(_ holders: [Holder], now: UInt64 = 10_000) -> String? {
        ClientMemoryBudget.evictee(among: holders, now: now, patienceMilliseconds: 1000,
                                   bytes: \.bytes, unreadSince: \.unreadSince)?.name
    }

    @Test func theLargestOfThoseUnreadForThePatienceGoes() {
        #expect(Self.evictee([Holder(name: "a", bytes: 100, unreadSince: 0),
                              Holder(name: "b", bytes: 300, unreadSince: 8_000),
                              Holder(name: "c", bytes: 200, unreadSince: 9_000)]) == "b")
    }

    @Test func aClientThatReadWithinThePatienceOrHoldsNothingStays() {
        // Larger, but it took everything 500 ms ago; and one that holds nothing.
        #expect(Self.evictee([Holder(name: "recent", bytes: 900, unreadSince: 9_500),
                              Holder(name: "old", bytes: 10, unreadSince: 1_000),
                              Holder(name: "empty", bytes: 0, unreadSince: 0)]) == "old")
        #expect(Self.evictee([Holder(name: "reads", bytes: 900, unreadSince: nil),
                              Holder(name: "recent", bytes: 900, unreadSince: 9_001)]) == nil)
    }
}
