/// Writes the wire form of events, straight into bytes.
///
/// An event line is `{"event":"change","object":…,"keyPath":…,"kind":…,…,"seq":N}\n`.
/// Its head, up to the key path, is the same for every event of a path, so
/// the index keeps it encoded (``PathNode/eventHead``). An observation's
/// context goes just before the closing `}\n` (``eventTerminator``): that
/// split is what lets one encoding serve every observation of a change.
///
/// `@_spi(Benchmarks)`: the engine micro-benchmarks (Benchmarks/) time it
/// directly; it is no part of the engine's API.
@_spi(Benchmarks) public enum EventEncoder {
    static let eventTerminator: [UInt8] = Array("}\n".utf8)
    /// Written after the prefix of an event that replaces N held ones, before N.
    static let coalescedLabel: [UInt8] = Array(#","coalesced":"#.utf8)

    /// `{"event":"change","object":<object>,"keyPath":<keyPath>`: the head of every event of one path.
    @_spi(Benchmarks) public static func head(object: String, keyPath: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + object.utf8.count + keyPath.utf8.count)
        bytes.append(literal: #"{"event":"change","object":"#)
        JSONWriter.writeString(object, into: &bytes)
        bytes.append(literal: #","keyPath":"#)
        JSONWriter.writeString(keyPath, into: &bytes)
        return bytes
    }

    /// Appends the event that an observation with `options` gets for a change
    /// of `changeKind` (with its `indexes` and `seq`), at a key path that is
    /// the changed one (`exact`: the change's own kind and indexes) or above
    /// or under it (`setting`). `old` and `new` are the values at that key
    /// path. Live dispatch and replay both encode through here, so a replayed
    /// event is the live one, byte for byte.
    static func change<Sink: ByteSink>(into bytes: inout Sink, head: [UInt8], changeKind: ChangeKind, indexes: [Int],
                                       seq: UInt64, exact: Bool, old: JSONValue?, new: JSONValue?,
                                       options: ObservationOptions, prior: Bool) {
        let kind = exact ? changeKind : .setting
        change(to: &bytes, head: head, kind: kind,
               new: !prior && options.contains(.new) && kind != .removal ? .some(new) : .none,
               old: options.contains(.old) && kind != .insertion ? .some(old) : .none,
               indexes: exact && kind != .setting ? indexes : nil,
               seq: seq, prior: prior)
    }

    /// The usual event, as ``change(into:head:kind:new:old:indexes:seq:prior:initial:)``
    /// writes it for a setting with only `new`: `new` is read where it is,
    /// not copied into a double optional.
    static func setting<Sink: ByteSink>(into bytes: inout Sink, head: [UInt8], new: borrowing JSONValue?, seq: UInt64) {
        bytes.append(array: head)
        bytes.append(literal: #","kind":"setting","new":"#)
        switch new {
        case .some(let value): JSONWriter.write(value, to: &bytes)
        case .none: bytes.append(literal: "null")
        }
        appendSeqAndEnd(seq, to: &bytes)
    }

    /// The same, as a line of its own, for `change` (replay).
    static func change(_ change: ChangeRecord, head: [UInt8], exact: Bool, old: JSONValue?, new: JSONValue?,
                       options: ObservationOptions, prior: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        self.change(into: &bytes, head: head, changeKind: change.kind, indexes: change.indexes, seq: change.seq,
                    exact: exact, old: old, new: new, options: options, prior: prior)
        return bytes
    }

    /// Appends a whole event line, `head` then
    /// `,"kind":…[,"prior":true][,"initial":true][,"new":…][,"old":…][,"indexes":[…]],"seq":N}\n`.
    ///
    /// `new` and `old` are double optionals: `.none` leaves the field out,
    /// `.some(nil)` writes `null` (the value is missing).
    @_spi(Benchmarks) public static func change(
        into bytes: inout [UInt8], head: [UInt8], kind: ChangeKind, new: JSONValue??, old: JSONValue??,
        indexes: [Int]?, seq: UInt64, prior: Bool = false, initial: Bool = false
    ) {
        change(to: &bytes, head: head, kind: kind, new: new, old: old, indexes: indexes, seq: seq, prior: prior,
               initial: initial)
    }

    /// ``change(into:head:kind:new:old:indexes:seq:prior:initial:)`` into any byte sink.
    static func change<Sink: ByteSink>(
        to bytes: inout Sink, head: [UInt8], kind: ChangeKind, new: JSONValue??, old: JSONValue??,
        indexes: [Int]?, seq: UInt64, prior: Bool = false, initial: Bool = false
    ) {
        bytes.append(array: head)
        // Each append has a fixed cost well above its copy: the usual event
        // (a setting, with new) gets its literal parts in one.
        if case .some(let value) = new, kind == .setting, !prior, !initial {
            bytes.append(literal: #","kind":"setting","new":"#)
            JSONWriter.write(value ?? .null, to: &bytes)
        } else {
            switch kind {
            case .setting: bytes.append(literal: #","kind":"setting""#)
            case .insertion: bytes.append(literal: #","kind":"insertion""#)
            case .removal: bytes.append(literal: #","kind":"removal""#)
            case .replacement: bytes.append(literal: #","kind":"replacement""#)
            }
            if prior { bytes.append(literal: #","prior":true"#) }
            if initial { bytes.append(literal: #","initial":true"#) }
            if case .some(let value) = new {
                bytes.append(literal: #","new":"#)
                JSONWriter.write(value ?? .null, to: &bytes)
            }
        }
        if case .some(let value) = old {
            bytes.append(literal: #","old":"#)
            JSONWriter.write(value ?? .null, to: &bytes)
        }
        if let indexes {
            bytes.append(literal: #","indexes":["#)
            for (position, index) in indexes.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendDecimal(index, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        appendSeqAndEnd(seq, to: &bytes)
    }

    /// Appends `,"seq":N}\n` with one copy (built on the stack).
    static func appendSeqAndEnd<Sink: ByteSink>(_ seq: UInt64, to bytes: inout Sink) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            // Digits right-aligned before the closing `}\n`, the member name before them.
            var position = raw.count - 2
            raw[position] = UInt8(ascii: "}")
            raw[position + 1] = UInt8(ascii: "\n")
            var remaining = seq
            repeat {
                position -= 1
                raw[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            let name: StaticString = #","seq":"#
            position -= name.utf8CodeUnitCount
            UnsafeMutableRawBufferPointer(rebasing: raw[position...])
                .copyMemory(from: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            bytes.append(bytes: UnsafeRawBufferPointer(rebasing: raw[position...]))
        }
    }

    /// Appends an integer's decimal digits without going through `String`.
    static func appendDecimal<T: BinaryInteger, Sink: ByteSink>(_ value: T, to bytes: inout Sink) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            appendDecimal(UInt64(value.magnitude), to: &bytes)
            return
        }
        var remaining = UInt64(value)
        if remaining < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = 24
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            bytes.append(bytes: UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }
}
