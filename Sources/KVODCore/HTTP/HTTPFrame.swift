import KVOProtocol

/// One event line's Server-Sent Event: its `event:` and `data:` lines read
/// once, and the whole frame with its `id:` line kept for the last epoch and
/// count it was asked with (the same for every stream, usually).
struct HTTPFrame {
    /// The line (without its newline).
    private var line: [UInt8] = []
    /// Its top-level `seq`, if any.
    private(set) var seq: Int?
    /// `event: …\ndata: LINE\n\n`: the frame after its `id:` line.
    private var tail: [UInt8] = []
    /// The whole frame with its `id:` line, for this epoch and count.
    private var whole: [UInt8] = []
    private var wholeEpoch: [UInt8] = []
    private var wholeCount = -1

    init() {}

    init(_ line: UnsafeRawBufferPointer) { load(line) }

    /// Reads and frames `line`.
    mutating func load(_ line: UnsafeRawBufferPointer) {
        self.line.removeAll(keepingCapacity: true)
        self.line.append(contentsOf: line)
        let members = EventLineMembers(line)
        seq = members.seq
        tail.removeAll(keepingCapacity: true)
        tail.append(contentsOf: Self.eventField)
        if members.failed {
            tail.append(contentsOf: Self.errorName)
        } else if let name = members.event {
            tail.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[name]))
        } else {
            tail.append(contentsOf: Self.changeName)
        }
        tail.append(contentsOf: Self.dataField)
        tail.append(contentsOf: line)
        tail.append(contentsOf: Self.frameEnd)
        wholeCount = -1
    }

    /// Appends the frame, with the `id:` line `epoch:seq:count` if the line has a `seq`.
    mutating func append(epoch: [UInt8], count: Int, to output: inout [UInt8]) {
        guard let seq else {
            output.append(contentsOf: tail)
            return
        }
        if count != wholeCount || !epoch.withUnsafeBytes({ epoch in wholeEpoch.withUnsafeBytes { $0.hasSameBytes(as: epoch) } }) {
            whole.removeAll(keepingCapacity: true)
            whole.append(contentsOf: Self.idField)
            whole.append(contentsOf: epoch)
            whole.append(UInt8(ascii: ":"))
            RequestEncoder.appendDecimal(seq, to: &whole)
            whole.append(UInt8(ascii: ":"))
            RequestEncoder.appendDecimal(count, to: &whole)
            whole.append(0x0A)
            whole.append(contentsOf: tail)
            wholeEpoch = epoch
            wholeCount = count
        }
        output.append(contentsOf: whole)
    }

    /// Whether this is the frame of `other`.
    func holds(_ other: UnsafeRawBufferPointer) -> Bool {
        line.withUnsafeBytes { $0.hasSameBytes(as: other) }
    }

    private static let idField = Array("id: ".utf8)
    private static let eventField = Array("event: ".utf8)
    private static let dataField = Array("\ndata: ".utf8)
    private static let frameEnd = Array("\n\n".utf8)
    private static let changeName = Array("change".utf8)
    private static let errorName = Array("error".utf8)
}
