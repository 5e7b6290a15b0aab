/// Gives the heap's free pages back to the kernel: glibc's `malloc_trim(3)`,
/// which Swift's Glibc module does not export.
///
/// Freed memory stays resident, in malloc's free lists among live blocks.
/// When many clients are answered in one loop iteration (10,000 clients that
/// each observe 100 key paths at once, say), their output buffers all peak
/// together and are freed together; trimming then returns those pages
/// instead of keeping the peak resident for good.
struct HeapTrim {
    /// Freed output buffer capacity, in one flush pass, worth a trim.
    static let threshold = 4 << 20
    /// A trim walks the whole heap (milliseconds for a large one): at most one a second.
    static let minimumInterval = Duration.seconds(1)
    private var lastTrim: ContinuousClock.Instant?

    /// Trims if `released` bytes are worth it and the last trim is old enough.
    mutating func afterReleasing(_ released: Int) {
        guard released >= Self.threshold else { return }
        let now = ContinuousClock.now
        if let lastTrim, now - lastTrim < Self.minimumInterval { return }
        lastTrim = now
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
