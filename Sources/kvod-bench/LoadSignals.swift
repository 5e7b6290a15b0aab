import Synchronization

/// What the setter, observer and main threads of one load tell each other.
final class LoadSignals: Sendable {
    /// Main → setter: stop sending, collect the remaining replies.
    let stopSetting = Atomic<Bool>(false)
    /// Setter → observers: all sent sets are answered; ``expectedEvents`` is final.
    let settersFinished = Atomic<Bool>(false)
    /// Main → observers: stop waiting for events (the drain deadline passed).
    let abandon = Atomic<Bool>(false)
    /// Main → observers: record latencies now (the measurement window).
    let recording = Atomic<Bool>(false)
    /// Events the sets sent so far should cause (the sum of their keys' observer counts).
    let expectedEvents = Atomic<Int>(0)
    /// Events received by all observers.
    let deliveredEvents = Atomic<Int>(0)
    /// Earlier events that the delivered ones stand for (kvod's `"coalesced":N`).
    let coalescedEvents = Atomic<Int>(0)
    /// Observers → setter: room under the lag bound.
    let room = RoomSignal()
    /// Replies received by all setters.
    let acknowledgedSets = Atomic<Int>(0)
}
