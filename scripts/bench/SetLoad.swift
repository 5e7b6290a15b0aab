// A small load generator for docs/DURABILITY.md's figures: C connections,
// each keeping P sets in flight, N sets in all; prints sets per second.
// The same code drives kvod (line JSON) and Redis (RESP), so the ratio
// compares the servers, not two clients.
//
//   swiftc -O SetLoad.swift -o setload
//   setload kvod|redis SOCKET CONNECTIONS PIPELINE REQUESTS
//   setload ping kvod|redis SOCKET COUNT   (COUNT pings one after the other; prints p50 and p99 in ms)
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "ping", let count = Int(arguments[4]) {
    pingLatency(redis: arguments[2] == "redis", path: arguments[3], count: count)
    exit(0)
}
guard arguments.count == 6, let connections = Int(arguments[3]), let pipeline = Int(arguments[4]),
      let total = Int(arguments[5]), ["kvod", "redis"].contains(arguments[1]) else {
    fputs("usage: setload kvod|redis SOCKET CONNECTIONS PIPELINE REQUESTS\n", stderr)
    exit(2)
}
let isRedis = arguments[1] == "redis"
let path = arguments[2]

func request(connection: Int, number: Int) -> [UInt8] {
    let key = "bench:\(connection):\(number % 1000)"
    let value = String(number)
    if isRedis {
        return Array("*3\r\n$3\r\nSET\r\n$\(key.utf8.count)\r\n\(key)\r\n$\(value.utf8.count)\r\n\(value)\r\n".utf8)
    }
    return Array(#"{"op":"set","object":"bench/\#(connection)","keyPath":"k\#(number % 1000)","value":\#(value)}"#.utf8) + [10]
}

func connectSocket() -> Int32 {
    connectSocket(path)
}

func connectSocket(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
    }
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard fd >= 0, rc == 0 else {
        fputs("cannot connect to \(path): errno \(errno)\n", stderr)
        exit(1)
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return fd
}

struct Connection {
    let fd: Int32
    var sent = 0
    var answered = 0
    var quota: Int
    var pending: [UInt8] = []
}

var clients = (0..<connections).map { index in
    Connection(fd: connectSocket(), quota: total / connections + (index < total % connections ? 1 : 0))
}
var buffer = [UInt8](repeating: 0, count: 1 << 16)
var start = timespec()
clock_gettime(CLOCK_MONOTONIC, &start)
var remaining = total
while remaining > 0 {
    for index in clients.indices {
        // Top up the window, then push out what the socket takes.
        while clients[index].sent < clients[index].quota && clients[index].sent - clients[index].answered < pipeline {
            clients[index].pending += request(connection: index, number: clients[index].sent)
            clients[index].sent += 1
        }
        if !clients[index].pending.isEmpty {
            let written = clients[index].pending.withUnsafeBytes { send(clients[index].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 { clients[index].pending.removeFirst(written) }
        }
    }
    var fds = clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN) | ($0.pending.isEmpty ? 0 : Int16(POLLOUT)), revents: 0) }
    guard poll(&fds, nfds_t(fds.count), 10_000) > 0 else {
        fputs("no progress for 10 s (\(remaining) replies missing)\n", stderr)
        exit(1)
    }
    for (index, polled) in fds.enumerated() where polled.revents & Int16(POLLIN) != 0 {
        let count = buffer.withUnsafeMutableBytes { recv(polled.fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            if count < 0 && errno == EAGAIN { continue }
            fputs("connection \(index) closed (\(count))\n", stderr)
            exit(1)
        }
        var lines = 0
        for byte in buffer[..<count] where byte == 10 { lines += 1 }
        clients[index].answered += lines
        remaining -= lines
    }
}
var end = timespec()
clock_gettime(CLOCK_MONOTONIC, &end)
let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
print(Int(Double(total) / seconds))

/// What a client that only reads waits for while others write: one ping at a
/// time, each timed from send to reply.
func pingLatency(redis: Bool, path: String, count: Int) {
    let fd = connectSocket(path)
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    let line = redis ? Array("*1\r\n$4\r\nPING\r\n".utf8) : Array(#"{"op":"ping"}"#.utf8) + [10]
    var samples: [Double] = []
    var byte: UInt8 = 0
    for _ in 0..<count {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        while recv(fd, &byte, 1, 0) == 1 && byte != 10 {}
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        samples.append(Double(end.tv_sec - start.tv_sec) * 1e3 + Double(end.tv_nsec - start.tv_nsec) / 1e6)
        usleep(2_000)
    }
    samples.sort()
    let p50: Double = samples[samples.count / 2]
    let p99: Double = samples[samples.count * 99 / 100]
    print("\((p50 * 100).rounded() / 100) \((p99 * 100).rounded() / 100)")
}
