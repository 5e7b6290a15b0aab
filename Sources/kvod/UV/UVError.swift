import CLibUV

/// A libuv error: a negative `uv_errno_t` code (on Unix, `-errno`).
///
/// Every throwing call of the UV layer throws this type, so the daemon can
/// compare against the constants below without touching libuv's enum.
struct UVError: Error, CustomStringConvertible, Equatable, Hashable {
    /// The negative libuv error code, e.g. `UV_EPIPE`.
    let code: Int32

    init(code: Int32) {
        self.code = code
    }

    /// Builds an error from the current `errno`, for the few plain syscalls
    /// the layer makes itself (chmod, umask-guarded bind...).
    static func fromErrno(_ value: Int32) -> UVError {
        UVError(code: uv_translate_sys_error(value))
    }

    /// Short symbolic name, e.g. `"EPIPE"`. Uses the `_r` variant because
    /// `uv_err_name` leaks a malloc'd string for unknown codes.
    var name: String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            String(cString: uv_err_name_r(code, buffer.baseAddress, buffer.count))
        }
    }

    /// Human-readable message, e.g. `"EPIPE: broken pipe"`.
    var description: String {
        let message = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            String(cString: uv_strerror_r(code, buffer.baseAddress, buffer.count))
        }
        return "\(name): \(message)"
    }

    /// Throws when a libuv return code is negative; passes non-negative codes
    /// through (some calls return a count, e.g. `uv_try_write`).
    @discardableResult
    static func check(_ rc: Int32) throws(UVError) -> Int32 {
        if rc < 0 { throw UVError(code: rc) }
        return rc
    }

    // The codes the daemon is expected to branch on.
    static let again = UVError(code: UV_EAGAIN.rawValue)
    static let tooManyOpenFiles = UVError(code: UV_EMFILE.rawValue)
    static let fileTableOverflow = UVError(code: UV_ENFILE.rawValue)
    static let nameTooLong = UVError(code: UV_ENAMETOOLONG.rawValue)
    static let invalidArgument = UVError(code: UV_EINVAL.rawValue)
    static let badFileDescriptor = UVError(code: UV_EBADF.rawValue)
    static let outOfMemory = UVError(code: UV_ENOMEM.rawValue)
}
