import KVODCore
import Testing

@Suite struct HeapTrimScheduleTests {
    let big = HeapTrimSchedule.threshold

    @Test func aSmallReleaseNeverTrims() {
        var schedule = HeapTrimSchedule()
        #expect(schedule.released(big - 1, now: 5_000) == .none)
        #expect(schedule.deferredUntil == nil)
    }

    @Test func theFirstLargeReleaseTrimsAtOnce() {
        var schedule = HeapTrimSchedule()
        #expect(schedule.released(big, now: 5_000) == .trimNow)
    }

    @Test func aLargeReleaseWithinTheIntervalIsDeferredToItsEnd() {
        var schedule = HeapTrimSchedule()
        #expect(schedule.released(big, now: 5_000) == .trimNow)
        #expect(schedule.released(big, now: 5_300) == .trimAt(6_000))
        #expect(schedule.deferredUntil == 6_000)
        // Already deferred: no second timer.
        #expect(schedule.released(big, now: 5_600) == .none)
        schedule.trimmed(now: 6_000)
        #expect(schedule.deferredUntil == nil)
        #expect(schedule.released(big, now: 6_400) == .trimAt(7_000))
    }

    @Test func aLargeReleaseAfterTheIntervalTrimsAtOnce() {
        var schedule = HeapTrimSchedule()
        #expect(schedule.released(big, now: 5_000) == .trimNow)
        #expect(schedule.released(big, now: 6_000) == .trimNow)
        #expect(schedule.released(big, now: 6_999) == .trimAt(7_000))
    }
}
