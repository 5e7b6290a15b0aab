import KVOEngine
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Which socket directories and sockets the daemon and its clients accept.
@Suite struct SocketDirectoryRuleTests {
    static func status(_ type: mode_t, _ mode: mode_t, owner: uid_t) -> stat {
        var status = stat()
        status.st_mode = type | mode
        status.st_uid = owner
        return status
    }

    static func problem(_ status: stat) -> String? {
        SocketDirectoryRule.problem(directory: "/tmp/kvod-1000", status, owners: [1000], remedy: "or pass --socket")
    }

    @Test func ownDirectoryNobodyElseMayWriteInPasses() {
        #expect(Self.problem(Self.status(S_IFDIR, 0o700, owner: 1000)) == nil)
        #expect(Self.problem(Self.status(S_IFDIR, 0o755, owner: 1000)) == nil)
    }

    @Test func symlinkOtherFileForeignOwnerOrGroupOrOtherWriteIsRefusedSayingWhatToDo() {
        #expect(Self.problem(Self.status(S_IFLNK, 0o777, owner: 1000))?.contains("is a symbolic link") == true)
        #expect(Self.problem(Self.status(S_IFREG, 0o600, owner: 1000))?.contains("is not a directory") == true)
        let foreign = Self.problem(Self.status(S_IFDIR, 0o700, owner: 1001))
        #expect(foreign?.contains("belongs to uid 1001, not to uid 1000") == true, "\(foreign ?? "")")
        #expect(foreign?.hasSuffix("or pass --socket") == true)
        for mode: mode_t in [0o770, 0o702, 0o1777] {
            let open = Self.problem(Self.status(S_IFDIR, mode, owner: 1000))
            #expect(open?.contains("chmod go-w /tmp/kvod-1000") == true, "\(open ?? "")")
        }
    }

    @Test func socketMustBeASocketOfAnExpectedOwner() {
        let path = "/run/kvod/kvod.sock"
        #expect(SocketDirectoryRule.problem(socket: path, Self.status(S_IFSOCK, 0o660, owner: 0), owners: [0, 999],
                                            remedy: "") == nil)
        #expect(SocketDirectoryRule.problem(socket: path, Self.status(S_IFSOCK, 0o660, owner: 1001), owners: [0, 999],
                                            remedy: "")?.contains("belongs to uid 1001, not to uid 0 or uid 999") == true)
        #expect(SocketDirectoryRule.problem(socket: path, Self.status(S_IFREG, 0o600, owner: 0), owners: [0],
                                            remedy: "")?.contains("is not a socket") == true)
    }
}
