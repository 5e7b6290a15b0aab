import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 35 item 3: a hung first endpoint is skipped. Its listen queue takes
/// the connection and nothing answers, as a stopped member or a frozen VM
/// would do; kvod exited after its 5 s request timeout ("cannot read
/// /kvod/meta/epoch … Timeout was reached") although the next endpoint answered.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterEndpointFailoverTests {
    @Test func kvodStartsAndServesWhenItsFirstEndpointHangs() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let hung = try HungListener()
        let kvod = try await KVODProcess(arguments: ["--etcd", "http://127.0.0.1:\(hung.port),\(cluster.clientURLs[0])"])
        try Self.setAndGet(kvod.socketPath)
        withExtendedLifetime(hung) {}
    }

    /// A set answered ok and read back (the dedicated thread may block).
    private static func setAndGet(_ socketPath: String) throws {
        let client = try LineClient(path: socketPath)
        let reply = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, timeout: 20).reply
        #expect(reply["ok"] == true, "\(reply)")
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["value"] == 1)
    }
}

/// A TCP port on 127.0.0.1 that accepts connections into its queue and
/// never reads or answers them.
final class HungListener {
    let port: UInt16
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw TestFailure("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
