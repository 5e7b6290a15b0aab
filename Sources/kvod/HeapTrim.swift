import KVODCore

/// Gives the heap's free pages back to the kernel: glibc's `malloc_trim(3)`,
/// which Swift's Glibc module does not export, when ``HeapTrimSchedule`` says.
///
/// Freed memory stays resident, in malloc's free lists among live blocks.
/// When many clients are answered in one loop iteration (10,000 clients that
/// each observe 100 key paths at once, say), their output buffers all peak
/// together and are freed together; trimming then returns those pages
/// instead of keeping the peak resident for good.
final class HeapTrim {
    private var schedule = HeapTrimSchedule()
    private let loop: UVLoop
    private var timer: UVTimer?
    /// Trims made since start (`kvod_heap_trims_total`).
    private(set) var count = 0

    init(loop: UVLoop) {
        self.loop = loop
    }

    /// A flush pass freed `released` bytes of output buffers.
    func afterReleasing(_ released: Int) {
        switch schedule.released(released, now: loop.now) {
        case .none: break
        case .trimNow: trim()
        case .trimAt(let due):
            let timer = self.timer ?? UVTimer(loop: loop)
            self.timer = timer
            timer.start(afterMilliseconds: due > loop.now ? due - loop.now : 0) { [unowned self] in
                schedule.trimmed(now: loop.now)
                trim()
            }
        }
    }

    func close() {
        timer?.close()
        timer = nil
    }

    private func trim() {
        count += 1
        Self.releaseFreePages()
    }

    #if os(Linux)
    /// Returns whether any memory was released.
    @discardableResult
    static func releaseFreePages() -> Bool { glibcMallocTrim(0) != 0 }
    #else
    @discardableResult
    static func releaseFreePages() -> Bool { false }
    #endif
}

#if os(Linux)
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
