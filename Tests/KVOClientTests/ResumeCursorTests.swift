@testable import KVOClient
import Testing

/// The bookkeeping that makes a reconnect's resume exact when one seq covers
/// several changes (over etcd: a batch's ops, pipelined changes): events fed
/// in, a reconnect, then the replay kvod sends from `since`.
@Suite struct ResumeCursorTests {
    /// Feeds `seqs` and returns those delivered.
    private func feed(_ cursor: inout ResumeCursor, _ seqs: [UInt64]) -> [UInt64] {
        seqs.filter { cursor.route(seq: $0) }
    }

    @Test func aRevisionReadInPartResumesFromTheSeqBeforeAndSkipsWhatWasDelivered() {
        var cursor = ResumeCursor(seq: 40)
        // Revision 41 holds three changes; the connection broke after two of its events.
        #expect(feed(&cursor, [41, 41]) == [41, 41])
        #expect(cursor.resumeSince() == 40)
        // kvod replays everything after 40, revision 41 whole and in the order it was applied.
        #expect(feed(&cursor, [41, 41, 41, 42]) == [41, 42], "the third change of 41 and 42, nothing twice")
        cursor.knowWhole(upTo: 42)
        #expect(cursor.resumeSince() == 42, "a seq the reply covered is whole")
    }

    @Test func aSecondCutDuringTheReplayStillSkipsExactlyWhatWasDelivered() {
        var cursor = ResumeCursor()
        #expect(feed(&cursor, [7, 7, 7]) == [7, 7, 7])
        #expect(cursor.resumeSince() == 6)
        #expect(feed(&cursor, [7]) == [])  // cut again, one of three repeated events skipped
        #expect(cursor.resumeSince() == 6)
        #expect(feed(&cursor, [7, 7, 7, 7, 8]) == [7, 8])
    }

    @Test func localModeSeqsAreDistinctAndResumeTheSameWay() {
        var cursor = ResumeCursor(seq: 3)
        #expect(feed(&cursor, [4, 5]) == [4, 5])
        #expect(cursor.resumeSince() == 4)
        #expect(feed(&cursor, [5, 6]) == [6])
    }

    @Test func aResumePointOrAReplyIsWholeAndAnOlderSeqDoesNotMoveTheCursor() {
        var cursor = ResumeCursor(seq: 10)
        #expect(cursor.resumeSince() == 10)
        #expect(feed(&cursor, [11, 9]) == [11, 9])
        #expect(cursor.resumeSince() == 10)
        cursor.knowWhole(upTo: 5)
        #expect(cursor.resumeSince() == 10, "an older reply does not forget what was read")
        var empty = ResumeCursor()
        #expect(empty.resumeSince() == nil)
    }
}

/// Prior events counted apart from changes, and the overlap of a replay that
/// starts before where the cursor stands (a registration made again with more
/// options, ConnectionCore+OptionsChange.swift).
@Suite struct ResumeCursorPriorAndOverlapTests {
    private func feed(_ cursor: inout ResumeCursor, _ events: [(UInt64, Bool)]) -> [String] {
        events.filter { cursor.route(seq: $0.0, isPrior: $0.1) }.map { "\($0.0)\($0.1 ? "p" : "")" }
    }

    @Test func aReplayThatAddsPriorEventsDropsThoseOfTheChangesDelivered() {
        var cursor = ResumeCursor(seq: 40)
        #expect(feed(&cursor, [(41, false), (41, false)]) == ["41", "41"])  // no prior registered
        #expect(cursor.resumeSince() == 40)
        // Replayed with prior: each change of 41 after its prior event; the third is new.
        #expect(feed(&cursor, [(41, true), (41, false), (41, true), (41, false), (41, true), (41, false), (42, true)])
                    == ["41p", "41", "42p"])
    }

    @Test func aCutBetweenAPriorEventAndItsChangeSkipsThePriorOnce() {
        var cursor = ResumeCursor(seq: 40)
        #expect(feed(&cursor, [(41, true), (41, false), (41, true)]) == ["41p", "41", "41p"])
        #expect(cursor.resumeSince() == 40)
        #expect(feed(&cursor, [(41, true), (41, false), (41, true), (41, false), (42, false)]) == ["41", "42"])
    }

    @Test func anOverlappingReplayDropsEverythingUpToTheCursor() {
        var cursor = ResumeCursor(seq: 10)
        let since = cursor.sinceForReplay
        #expect(since == 10)
        #expect(feed(&cursor, [(11, false), (12, false)]) == ["11", "12"])  // still arriving from the old registration
        cursor.startOverlap()
        #expect(feed(&cursor, [(11, false), (12, false), (13, true), (13, false)]) == ["13p", "13"])
        #expect(feed(&cursor, [(12, false)]) == ["12"], "after the replay passed, an older seq is a coalesced rest")
    }

    @Test func anOverlapAtAWholeSeqDropsItsReplayedEvents() {
        var cursor = ResumeCursor()
        cursor.knowWhole(upTo: 20)
        cursor.startOverlap()
        #expect(feed(&cursor, [(19, false), (20, false), (21, false)]) == ["21"])
    }
}
