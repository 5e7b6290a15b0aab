import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// No request is left waiting for a reply that cannot come. With no request
/// timeout to rescue a lost one, many tasks pipeline on one connection, a
/// flood of raw lines is in flight, and the connection ends in the middle:
/// every call must end, by its reply or by the error that ended the
/// connection, and every raw callback must be told exactly once.
@Suite(.onDedicatedThread) struct RequestSettlementTests {
    enum Ending: String, Sendable, CaseIterable {
        /// `close()` by this program: everything ends with `closed`.
        case close
        /// kvod killed with SIGKILL: everything ends with `connection_lost`.
        case kill
    }

    static let tasks = 32
    static let rawLines = 2_000

    @Test(arguments: Ending.allCases)
    func everyRequestEndsWhenTheConnectionEndsMidStream(_ ending: Ending) async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath, requestTimeout: nil)
        let answered = Recorder<Int>()
        let raw = Recorder<KVOClientError?>()
        let endings = try await withDeadline("every request has ended", seconds: 60) {
            try await withThrowingTaskGroup(of: KVOClientError?.self) { group in
                for task in 0..<Self.tasks {
                    group.addTask {
                        do throws(KVOClientError) {
                            for value in 0... {
                                try await connection.set("o", "k\(task)", to: value)
                                answered.append(task)
                            }
                        } catch {
                            return error
                        }
                        return nil
                    }
                }
                group.addTask {
                    try await waitUntil("1,000 sets are answered", timeout: 30) { () async -> Bool in
                        answered.count >= 1_000
                    }
                    for _ in 0..<Self.rawLines {
                        connection.sendRaw(#"{"op":"ping"}"#) { result in
                            if case .failure(let error) = result { raw.append(error) } else { raw.append(nil) }
                        }
                    }
                    switch ending {
                    case .close: connection.close()
                    case .kill: try await kvod.kill()
                    }
                    return nil
                }
                var endings: [KVOClientError] = []
                for try await error in group { if let error { endings.append(error) } }
                return endings
            }
        }
        let expected: KVOClientError.Code = ending == .close ? .closed : .connectionLost
        #expect(endings.count == Self.tasks, "every task's last request failed")
        let unexpected = endings.filter { $0.code != expected }
        #expect(unexpected.isEmpty, "\(unexpected)")
        let told = try await raw.waitForCount(Self.rawLines, timeout: 30)
        #expect(told.allSatisfy { $0 == nil || $0?.code == expected })
        // Nothing is told twice: a line sent now fails at once, after every
        // failure the ending caused, and the count has stayed where it was.
        let sentinel = Recorder<KVOClientError?>()
        _ = connection.sendRaw(#"{"op":"ping"}"#) { result in
            if case .failure(let error) = result { sentinel.append(error) } else { sentinel.append(nil) }
        }
        #expect(try await sentinel.waitForCount(1, timeout: 30).first??.code == expected)
        #expect(raw.count == Self.rawLines)
    }
}
