import Synchronization

/// Collects values from any thread (callbacks, streams) for a test to wait on.
public final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    public init() {}

    public func append(_ value: Value) { storage.withLock { $0.append(value) } }

    public var values: [Value] { storage.withLock { $0 } }

    public var count: Int { storage.withLock { $0.count } }

    /// The values, once there are at least `count` of them; fails after `timeout` seconds.
    @discardableResult
    public func waitForCount(_ count: Int, timeout: Double = 10) async throws -> [Value] {
        try await waitUntil("\(count) values are recorded (have \(self.count))", timeout: timeout) { () async -> Bool in
            self.count >= count
        }
        return values
    }
}
