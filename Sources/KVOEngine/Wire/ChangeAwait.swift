/// What a change's reply waits for (`await` and `awaitTimeout` on a change
/// op or a batch): its events written to every observer's connection, or
/// acknowledged by every ack observation, for at most ``timeout`` ms.
public struct ChangeAwait: Sendable, Equatable {
    /// What the reply waits for.
    public enum Condition: String, Sendable {
        /// Every event of the change is in its connection's kernel socket buffer.
        case written
        /// Every matching ack observation's connection acked the change's seq.
        case acknowledged
    }

    public var condition: Condition
    /// How long the reply waits at most, in milliseconds.
    public var timeout: UInt32

    /// `awaitTimeout` when none is given.
    public static let defaultTimeout: UInt32 = 5000
    /// The longest `awaitTimeout` accepted: one hour (the await timeout limit).
    public static let maxTimeout: UInt32 = 3_600_000
}
