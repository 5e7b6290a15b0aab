import Foundation

/// A value that is only touched under a lock.
///
/// An `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on
/// Linux, Mutex locks with futexes that ThreadSanitizer cannot see, so every
/// access it guards is reported as a race; pthread mutexes are understood.
///
/// @unchecked Sendable: `value` is read and written only while `lock` is held.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the lock held. `body` must not call out to code that
    /// may take the same lock.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
