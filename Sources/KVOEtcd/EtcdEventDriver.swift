/// What a socket of the client waits for, as libcurl asks for it.
public enum EtcdSocketInterest: Sendable, Equatable {
    case readable
    case writable
    case readableAndWritable
}

/// The event loop that drives an ``EtcdClient``: the client owns no thread and
/// no loop. It tells the driver which sockets to watch and when to wake it (what
/// libcurl's `CURLMOPT_SOCKETFUNCTION` and `CURLMOPT_TIMERFUNCTION` ask for),
/// and the driver calls ``EtcdClient/socketReady(_:readable:writable:failed:)``
/// and ``EtcdClient/timerFired()`` back. kvod's libuv loop will be one driver
/// (`uv_poll_t` per socket, one `uv_timer_t`); ``EtcdPollLoop`` is another.
///
/// Calls come from inside the client's own calls: the driver must only record
/// them, never call the client back before returning.
public protocol EtcdEventDriver: AnyObject {
    /// Watch `socket` for `interest`, replacing what was asked before; nil: stop watching it.
    func watch(socket: Int32, for interest: EtcdSocketInterest?)
    /// Call ``EtcdClient/timerFired()`` once, after `milliseconds` (0: as soon as
    /// the loop turns), replacing any earlier request; nil: cancel it.
    func scheduleTimer(milliseconds: Int?)
}
