import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads etcd's JSON gateway's HTTP/1.1 responses on one keep-alive
/// connection, whatever pieces TCP delivers: a unary reply (`/v3/kv/put`,
/// `Content-Length`) is one ``InboundHandler/reply(ok:line:)``; a watch
/// (`/v3/watch`, chunked, one JSON message a line) is a reply when it is
/// created and an ``InboundHandler/event(key:index:sentAt:)`` per put it
/// reports, its payload decoded from the base64 value. Not a JSON parser: it
/// finds the members it needs by name, as `KVODParser` does in kvod's events.
final class HTTPResponseReader {
    private enum State {
        case head
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        /// After the last chunk: the empty trailer line, then the next response.
        case trailerEnd
    }

    private var state = State.head
    private var buffer: [UInt8] = []
    private var status = 0
    /// A chunked body's bytes since its last newline: the watch message under way.
    private var message: [UInt8] = []
    /// Whether the chunked response under way is a watch's stream (its lines
    /// are `{"result":…}` messages); else it is a unary reply Go's server
    /// chunked for its size (a `Txn` of many puts), one reply at its end.
    private var isWatch = false

    func consume<H: InboundHandler>(_ bytes: UnsafeRawBufferPointer, _ handler: H) {
        buffer.append(contentsOf: bytes)
        var position = 0
        while position < buffer.count, step(&position, handler) {}
        buffer.removeFirst(position)
    }

    /// Moves through one piece of the response; false when more bytes are needed.
    private func step<H: InboundHandler>(_ position: inout Int, _ handler: H) -> Bool {
        switch state {
        case .head:
            guard let end = find([13, 10, 13, 10], from: position) else { return false }
            let head = String(decoding: buffer[position..<end], as: UTF8.self).lowercased()
            position = end + 4
            let lines = head.split(separator: "\r\n")
            status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            if lines.contains(where: { $0.hasPrefix("transfer-encoding:") && $0.contains("chunked") }) {
                state = .chunkSize
                isWatch = false
            } else {
                let length = lines.first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                state = .body(remaining: length)
            }
        case .body(let remaining):
            guard buffer.count - position >= remaining else { return false }
            buffer[position..<position + remaining].withUnsafeBytes { handler.reply(ok: status == 200, line: $0) }
            position += remaining
            state = .head
        case .chunkSize:
            guard let end = find([13, 10], from: position) else { return false }
            let size = Int(String(decoding: buffer[position..<end], as: UTF8.self).split(separator: ";")[0], radix: 16) ?? 0
            position = end + 2
            state = size == 0 ? .trailerEnd : .chunkData(remaining: size)
            if size == 0 {
                if !isWatch { message.withUnsafeBytes { handler.reply(ok: status == 200, line: $0) } }
                message.removeAll()
            }
        case .chunkData(let remaining):
            let taken = min(remaining, buffer.count - position)
            for byte in buffer[position..<position + taken] {
                if byte == 10, isWatch || message.starts(with: Self.result) {
                    isWatch = true
                    message.withUnsafeBytes { watchMessage($0, handler) }
                    message.removeAll(keepingCapacity: true)
                } else {
                    message.append(byte)
                }
            }
            position += taken
            state = taken == remaining ? .chunkEnd : .chunkData(remaining: remaining - taken)
        case .chunkEnd, .trailerEnd:
            guard buffer.count - position >= 2 else { return false }
            position += 2
            if case .chunkEnd = state { state = .chunkSize } else { state = .head }
        }
        return true
    }

    private static let result = Array(#"{"result":"#.utf8)
    private static let created = Array(#""created":true"#.utf8)
    private static let failed = Array(#""error""#.utf8)
    private static let cancelled = Array(#""canceled":true"#.utf8)
    private static let keyMember = Array(#""key":""#.utf8)
    private static let valueMember = Array(#""value":""#.utf8)

    /// One watch message: created, failed or cancelled, or events.
    private func watchMessage<H: InboundHandler>(_ line: UnsafeRawBufferPointer, _ handler: H) {
        if Self.find(Self.created, in: line, from: 0) != nil { return handler.reply(ok: status == 200, line: line) }
        if Self.find(Self.failed, in: line, from: 0) != nil || Self.find(Self.cancelled, in: line, from: 0) != nil {
            return handler.reply(ok: false, line: line)
        }
        var position = 0
        while let keyStart = Self.find(Self.keyMember, in: line, from: position) {
            position = keyStart + Self.keyMember.count
            let key = Self.base64(line, &position)
            var keyNumber = -1
            for byte in key {
                if byte == UInt8(ascii: "/") {
                    keyNumber = 0
                } else if keyNumber >= 0, byte >= 48, byte <= 57 {
                    keyNumber = keyNumber &* 10 &+ Int(byte &- 48)
                }
            }
            guard let valueStart = Self.find(Self.valueMember, in: line, from: position) else {
                handler.event(key: keyNumber, index: -1, sentAt: 0)
                continue
            }
            position = valueStart + Self.valueMember.count
            let value = Self.base64(line, &position)
            value.withUnsafeBytes { payload in
                var cursor = 0
                let index = KVODParser.readNumber(payload, &cursor)
                cursor += 1
                let sentAt = KVODParser.readNumber(payload, &cursor)
                handler.event(key: keyNumber, index: index, sentAt: UInt64(max(sentAt, 0)))
            }
        }
    }

    /// The base64 from `position` up to the closing quote, decoded (empty if it is not base64);
    /// leaves `position` after the quote.
    private static func base64(_ line: UnsafeRawBufferPointer, _ position: inout Int) -> Data {
        let end = line[position...].firstIndex(of: UInt8(ascii: "\"")) ?? line.count
        defer { position = end + 1 }
        return Data(base64Encoded: Data(line[position..<end])) ?? Data()
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        buffer.withUnsafeBytes { Self.find(needle, in: $0, from: start) }
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        return needle.withUnsafeBytes { needleBytes in
            for offset in start...(bytes.count - needle.count)
            where memcmp(bytes.baseAddress! + offset, needleBytes.baseAddress!, needle.count) == 0 {
                return offset
            }
            return nil
        }
    }
}
