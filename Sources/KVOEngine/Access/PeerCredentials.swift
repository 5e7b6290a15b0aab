/// Who is at the other end of a connection, as the kernel vouches for it
/// (`SO_PEERCRED`, `SO_PEERGROUPS` on Linux): read by the daemon at connect.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The process that connected (it may have exited or passed the socket on since).
    public var pid: Int32
    public var uid: UInt32
    /// The primary group.
    public var gid: UInt32
    /// Supplementary groups; empty when the kernel cannot tell.
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// Whether the peer is in `group`, as primary or supplementary group.
    public func isMember(of group: UInt32) -> Bool { gid == group || groups.contains(group) }

    public var description: String { "pid=\(pid) uid=\(uid) gid=\(gid)" }
}
