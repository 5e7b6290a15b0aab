import Foundation
import Glibc

/// A network namespace of one test's own, joined to the root namespace by a
/// veth pair on a private /30 (10.213.x.y): a "host" whose link a test can
/// cut and restore, a real network failure (issue 18's tests).
///
/// Its names carry this process's id and a random part, so parallel runs
/// cannot collide; ``remove()`` (also called by `deinit`) deletes the veth
/// pair and the namespace. A process started in it (``exec``) keeps the
/// namespace alive until it exits: kill it first.
public final class NetworkNamespace: @unchecked Sendable {
    // @unchecked: only the test that owns this object touches it.
    public let name: String
    /// The veth end in the root namespace, and the one inside.
    public let rootInterface: String
    public let innerInterface: String
    /// The root side's address (what processes inside reach the root namespace
    /// at) and the inside's.
    public let rootAddress: String
    public let innerAddress: String
    private var removed = false

    /// `ip`, where iproute2 put it (root's PATH may lack /usr/sbin under a test runner).
    public static let ip: URL? = {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("ip") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether namespaces can be made here: root, `ip` installed, and a probe
    /// namespace made and deleted (a container without CAP_SYS_ADMIN fails there).
    public static let canBeMade: Bool = {
        guard geteuid() == 0, ip != nil else { return false }
        let probe = "kvod-probe-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard (try? run(["netns", "add", probe]))?.status == 0 else { return false }
        return (try? run(["netns", "del", probe]))?.status == 0
    }()

    /// Makes the namespace, its veth pair and addresses, both ends up: a few
    /// `ip` commands of milliseconds each, run from any thread (async tests
    /// that call it run on ``TestThreads``, `.onDedicatedThread`).
    public init() throws {
        Self.removeLeftovers()
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        name = "\(Self.namePrefix)\(getpid())-\(tag)"
        // Interface names are at most 15 bytes.
        rootInterface = "kv\(tag)r"
        innerInterface = "kv\(tag)n"
        let subnet = try Self.freeSubnet()
        rootAddress = "10.213.\(subnet.0).\(subnet.1 + 1)"
        innerAddress = "10.213.\(subnet.0).\(subnet.1 + 2)"
        do {
            try Self.check(["netns", "add", name])
            try Self.check(["link", "add", rootInterface, "type", "veth", "peer", "name", innerInterface, "netns", name])
            try Self.check(["addr", "add", "\(rootAddress)/30", "dev", rootInterface])
            try Self.check(["-n", name, "addr", "add", "\(innerAddress)/30", "dev", innerInterface])
            try Self.check(["-n", name, "link", "set", "lo", "up"])
            try Self.check(["-n", name, "link", "set", innerInterface, "up"])
            try Self.check(["link", "set", rootInterface, "up"])
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// The command line that runs a program inside: `exec + [program, arguments…]`.
    public var exec: [String] { [Self.ip!.path, "netns", "exec", name] }

    /// Cuts the link: the root side's end goes down, so nothing passes either
    /// way, and nothing tells either side's TCP connections (no reset, no FIN).
    public func cut() throws { try Self.check(["link", "set", rootInterface, "down"]) }

    /// Brings the link back up.
    public func restore() throws { try Self.check(["link", "set", rootInterface, "up"]) }

    /// Deletes the veth pair and the namespace; again is harmless.
    public func remove() {
        guard !removed else { return }
        removed = true
        _ = try? Self.run(["link", "del", rootInterface])
        _ = try? Self.run(["netns", "del", name])
    }

    /// What every namespace made here is named, then `<pid>-<tag>`.
    private static let namePrefix = "kvod-test-"

    /// Removes the namespaces, and their veth pairs, of test runs killed before
    /// they could (their process is gone): the names carry the pid.
    private static func removeLeftovers() {
        guard let listed = try? run(["netns", "list"]) else { return }
        for line in listed.lines {
            let name = String(line.split(separator: " ").first ?? "")
            let parts = name.dropFirst(namePrefix.count).split(separator: "-")
            guard name.hasPrefix(namePrefix), parts.count == 2, let pid = pid_t(parts[0]),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = try? run(["link", "del", "kv\(parts[1])r"])
            _ = try? run(["netns", "del", name])
        }
    }

    /// A /30 of 10.213.0.0/16 that no interface of the root namespace has an address in.
    private static func freeSubnet() throws -> (Int, Int) {
        let taken = try run(["-4", "-o", "addr", "show"]).stdout
        for _ in 0..<64 {
            let subnet = (Int.random(in: 0...255), Int.random(in: 0...63) * 4)
            if !taken.contains("10.213.\(subnet.0).\(subnet.1 + 1)/30") { return subnet }
        }
        throw TestFailure("no free /30 in 10.213.0.0/16")
    }

    @available(*, noasync)
    private static func run(_ arguments: [String]) throws -> CommandRun {
        guard let ip else { throw TestFailure("iproute2's ip is not installed") }
        return try CommandRun.run(ip, arguments, timeout: 10)
    }

    @available(*, noasync)
    private static func check(_ arguments: [String]) throws {
        let result = try run(arguments)
        guard result.status == 0 else {
            throw TestFailure("ip \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
    }
}
