/// One operation of a recorded history: which client made it, what it asked,
/// when it was called and when its answer came back (a monotonic clock, in
/// seconds), and the answer.
///
/// An operation whose outcome the client never learned (a timeout, a lost
/// connection, an answer that says it may have been applied) has no output
/// and returns at infinity: it may take effect at any point after its call,
/// or never ("maybe applied", as etcd's robustness tests record a failed request).
public struct HistoryOperation<Input, Output> {
    public var client: Int
    public var input: Input
    public var call: Double
    /// The answer; nil when the outcome is unknown.
    public var output: Output?
    /// When the answer came; `.infinity` when the outcome is unknown.
    public var returned: Double

    /// An operation that was answered `output` at `returned`.
    public init(client: Int, input: Input, call: Double, output: Output, returned: Double) {
        precondition(call <= returned, "an operation returns after its call")
        self.client = client
        self.input = input
        self.call = call
        self.output = output
        self.returned = returned
    }

    /// An operation whose outcome is unknown: applied at some point after `call`, or never.
    public init(client: Int, input: Input, call: Double) {
        self.client = client
        self.input = input
        self.call = call
        output = nil
        returned = .infinity
    }

    public var isUnknown: Bool { output == nil }
}

extension HistoryOperation: Sendable where Input: Sendable, Output: Sendable {}
