import Foundation
import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Reads lines from many connected sockets at once, from one thread, without
/// blocking on any one of them: what 100 observers would see, measured by one
/// test. Takes over the descriptors' reading (do not mix with `LineClient`
/// reads that may leave bytes buffered).
final class SocketFanIn {
    private var fds: [Int32]
    private var buffers: [[UInt8]]
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    init(fds: [Int32]) {
        self.fds = fds
        buffers = Array(repeating: [], count: fds.count)
    }

    /// Waits up to `timeoutMilliseconds` for data, reads what is there and
    /// calls `onLine(socketIndex, line)` for each complete line. Returns how
    /// many lines it delivered.
    @discardableResult
    func pump(timeoutMilliseconds: Int32, _ onLine: (Int, ArraySlice<UInt8>) -> Void) throws -> Int {
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&polls, nfds_t(polls.count), timeoutMilliseconds)
        guard ready > 0 else { return 0 }
        var delivered = 0
        for index in polls.indices where polls[index].revents != 0 {
            let count = chunk.withUnsafeMutableBytes { recv(fds[index], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { throw TestFailure("socket \(index) was closed by kvod") }
            if count < 0 { continue }
            buffers[index].append(contentsOf: chunk[..<count])
            var start = buffers[index].startIndex
            while let newline = buffers[index][start...].firstIndex(of: UInt8(ascii: "\n")) {
                onLine(index, buffers[index][start..<newline])
                delivered += 1
                start = newline + 1
            }
            buffers[index].removeSubrange(..<start)
        }
        return delivered
    }
}

/// Cheap field access for the hot loop of load tests: the integer after
/// `"name":` in a JSON line, found by bytes rather than by parsing the line.
func integerField(_ name: String, in line: ArraySlice<UInt8>) -> Int? {
    let key = Array("\"\(name)\":".utf8)
    guard line.count >= key.count else { return nil }
    var index = line.startIndex
    let last = line.endIndex - key.count
    while index <= last {
        if line[index] == key[0], line[index..<(index + key.count)].elementsEqual(key) {
            var value = 0
            var cursor = index + key.count
            var sawDigit = false
            while cursor < line.endIndex, line[cursor] >= 48, line[cursor] <= 57 {
                value = value * 10 + Int(line[cursor] - 48)
                cursor += 1
                sawDigit = true
            }
            return sawDigit ? value : nil
        }
        index += 1
    }
    return nil
}

/// Monotonic nanoseconds, comparable across the threads of one process.
func monotonicNanoseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// The `fraction` quantile (0.99: p99) of `values`, by nearest rank.
func quantile(_ values: [Int], _ fraction: Double) -> Int {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[rank]
}
