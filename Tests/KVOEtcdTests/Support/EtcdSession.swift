import KVOEtcd
import KVOTestSupport

/// A client of a test's etcd cluster and the poll loop that drives it, with
/// each call awaited: the loop turns (without blocking the thread) until the
/// answer comes or the deadline passes.
final class EtcdSession {
    let loop = EtcdPollLoop()
    let client: EtcdClient

    /// etcd's fsync on a disk that parallel builds also write can pass kvod's
    /// 5 s: a test's requests allow 15 s unless the test is about timeouts.
    init(endpoints: [String], requestTimeoutMilliseconds: Int = 15_000) throws {
        var configuration = EtcdClient.Configuration(endpoints: endpoints)
        configuration.requestTimeoutMilliseconds = requestTimeoutMilliseconds
        client = try EtcdClient(configuration, driver: loop)
        loop.client = client
    }

    /// The answer to the request `start` makes, or its error.
    func answer<T>(_ what: String, timeout: Double = 20,
                   _ start: (@escaping (Result<T, EtcdError>) -> Void) -> Void) async throws -> Result<T, EtcdError> {
        var outcome: Result<T, EtcdError>?
        start { outcome = $0 }
        try await turn(until: "etcd answers \(what)", timeout: timeout) { outcome != nil }
        return outcome!
    }

    /// The successful answer to the request `start` makes; throws its error.
    func call<T>(_ what: String, timeout: Double = 20,
                 _ start: (@escaping (Result<T, EtcdError>) -> Void) -> Void) async throws -> T {
        try await answer(what, timeout: timeout, start).get()
    }

    /// Turns the loop until `condition` holds.
    func turn(until what: String, timeout: Double = 15, _ condition: @escaping () -> Bool) async throws {
        try await waitUntil(what, timeout: timeout) { () async throws -> Bool in
            loop.turn(maxWaitMilliseconds: 0)
            return condition()
        }
    }

    func put(_ key: String, _ value: String, lease: Int64 = 0) async throws -> Int64 {
        try await call("put \(key)") { client.put(EtcdPutRequest(key, value, lease: lease), $0) }.header.revision
    }
}

/// Every update a watch reported, in order.
final class WatchLog {
    private(set) var updates: [EtcdWatchUpdate] = []

    func record(_ update: EtcdWatchUpdate) { updates.append(update) }

    /// The events of every `.events` update, joined.
    var events: [EtcdWatchEvent] {
        updates.flatMap { update -> [EtcdWatchEvent] in
            if case .events(_, let events) = update { return events }
            return []
        }
    }
}
