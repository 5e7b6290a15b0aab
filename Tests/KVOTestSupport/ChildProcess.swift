import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child program started with `posix_spawn`, in place of Foundation's
/// `Process`, with the part of its interface the tests use.
///
/// Why not `Process`: on Linux its `run()` lists `/proc/self/fd` to close
/// every other descriptor in the child and copies each entry's whole 256-byte
/// name, reading past glibc's buffer; a parallel run crashed there
/// (swift-corelibs-foundation #5472, fixed after the toolchain this project
/// uses). Here the child closes them itself (`posix_spawn_file_actions_addclosefrom_np`).
/// Exits are read from the kernel (``ChildExit``); the child is reaped when
/// this object goes away.
///
/// @unchecked Sendable: configured, then started once, by the test that owns it;
/// `seenStatus` is only touched with `lock` held.
public final class ChildProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment (nil: this process's).
    public var environment: [String: String]?
    /// A `Pipe` (the child gets one end; this process closes it once the child
    /// has it), a `FileHandle`, `FileHandle.nullDevice`, or nil: this process's.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    public private(set) var processIdentifier: pid_t = 0
    private let lock = NSLock()
    private var seenStatus: Int32?

    public init() {}

    deinit {
        guard processIdentifier > 0, lock.withLock({ seenStatus }) != nil || ChildExit.status(of: processIdentifier) != nil
        else { return }
        var status: Int32 = 0
        _ = waitpid(processIdentifier, &status, WNOHANG)
    }

    /// Starts the program, in a process group of its own, with default signal
    /// handling and no signal blocked, and only descriptors 0-2 open.
    public func run() throws {
        guard let executableURL else { throw TestFailure("ChildProcess has no executable") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (handle, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            switch handle {
            case let pipe as Pipe:
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            case let file as FileHandle where file === FileHandle.nullDevice:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case let file as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, file.fileDescriptor, target)
            default:
                break
            }
        }
        guard Self.addCloseFrom(&actions, 3) == 0 else { throw TestFailure("posix_spawn_file_actions_addclosefrom_np failed") }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let path = executableURL.path
        let environment = (self.environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var pid = pid_t()
        let result = Self.withCStrings([path] + arguments) { argv in
            Self.withCStrings(environment) { envp in posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
        }
        guard result == 0 else { throw TestFailure("cannot start \(path): \(String(cString: strerror(result)))") }
        processIdentifier = pid
        // The child has its ends now; holding them here would keep the pipes open past its exit.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
    }

    /// Whether the child still runs (false once it has exited, reaped or not).
    public var isRunning: Bool { exitStatus == nil }

    /// The exit status: its code, or 128 + the signal that ended it. Only once it has exited.
    public var terminationStatus: Int32 {
        guard let status = exitStatus else { preconditionFailure("pid \(processIdentifier) still runs") }
        return status
    }

    /// The exit status if the child has exited, remembered once seen.
    var exitStatus: Int32? {
        lock.withLock {
            if seenStatus == nil { seenStatus = ChildExit.status(of: processIdentifier) }
            return seenStatus
        }
    }

    /// SIGTERM.
    public func terminate() { kill(processIdentifier, SIGTERM) }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's
    /// Glibc module does not declare.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        pointers.append(nil)
        return body(pointers)
    }
}
