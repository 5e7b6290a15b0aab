import Foundation

/// Collects values from any thread (callbacks, streams) for a test to wait on.
///
/// @unchecked Sendable: `storage` is only touched with `lock` held (an NSLock,
/// which ThreadSanitizer understands, unlike Synchronization's Mutex on Linux).
public final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []

    public init() {}

    /// Keeps `value` and wakes whoever waits (``WaitSignal``).
    public func append(_ value: Value) {
        lock.withLock { storage.append(value) }
        WaitSignal.shared.notify()
    }

    public var values: [Value] { lock.withLock { storage } }

    public var count: Int { lock.withLock { storage.count } }

    /// The values, once there are at least `count` of them; fails after `timeout` seconds.
    @discardableResult
    public func waitForCount(_ count: Int, timeout: Double = 10) async throws -> [Value] {
        try await waitUntil("\(count) values are recorded (have \(self.count))", timeout: timeout,
                            recheckEvery: nil) { () async -> Bool in
            self.count >= count
        }
        return values
    }
}
