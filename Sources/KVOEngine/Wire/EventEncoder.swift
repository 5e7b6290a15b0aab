import KVOProtocol
import KVOValues

/// Writes the wire form of events, straight into bytes.
///
/// An event line is `{"event":"change","object":…,"keyPath":…,"kind":…,…,"seq":N}\n`.
/// Its head, up to the key path, is the same for every event of a path, so
/// the index keeps it encoded (``PathNode/eventHead``). An observation's
/// context goes just before the closing `}\n` (``eventTerminator``): that
/// split is what lets one encoding serve every observation of a change.
/// A compact event (`"compact":true` on `observe`) is `{"o":N` and the same
/// fields without the head and without `"kind":"setting"`: one encoding of
/// those fields serves every compact observation, each writing its own
/// `{"o":N` before them (``ClientController``'s `deliver`).
///
/// `@_spi(Benchmarks)`: the engine micro-benchmarks (Benchmarks/) time it
/// directly; it is no part of the engine's API.
@_spi(Benchmarks) public enum EventEncoder {
    static let eventTerminator: [UInt8] = Array("}\n".utf8)
    /// Written after the prefix of an event that replaces N held ones, before N.
    static let coalescedLabel: [UInt8] = Array(LineFragment.coalescedMember.description.utf8)

    /// `{"event":"change","object":<object>[,"prefix":<prefix>][,"keyPath":<keyPath>]`:
    /// the head of every event of one path (no `keyPath` for the whole
    /// document; `prefix` for a prefix observation's).
    @_spi(Benchmarks) public static func head(object: String, prefix: String? = nil, keyPath: String?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + object.utf8.count + (keyPath?.utf8.count ?? 0) + (prefix?.utf8.count ?? 0))
        bytes.append(literal: LineFragment.changeEventStart)
        JSONWriter.writeString(object, into: &bytes)
        if let prefix {
            bytes.append(literal: LineFragment.prefixMember)
            JSONWriter.writeString(prefix, into: &bytes)
        }
        if let keyPath {
            bytes.append(literal: LineFragment.keyPathMember)
            JSONWriter.writeString(keyPath, into: &bytes)
        }
        return bytes
    }

    /// `{"o":N`, the start of a compact event of the observation numbered N,
    /// built on the stack and appended with one copy (once per event).
    @inline(__always)
    static func appendCompactStart<Sink: ByteSink>(_ number: UInt64, to bytes: inout Sink) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            let base = raw.baseAddress!
            let lead = LineFragment.compactEventStart
            let start = writeDigits(number, endingAt: raw.count, in: base) - lead.utf8CodeUnitCount
            (base + start).copyMemory(from: lead.utf8Start, byteCount: lead.utf8CodeUnitCount)
            bytes.append(bytes: UnsafeRawBufferPointer(start: base + start, count: raw.count - start))
        }
    }

    /// `,"object":<object>`: what a compact event of a prefix observation
    /// says of the object that changed.
    static func appendObjectMember<Sink: ByteSink>(_ object: String, to bytes: inout Sink) {
        bytes.append(literal: LineFragment.objectMember)
        JSONWriter.writeString(object, to: &bytes)
    }

    /// The usual event (``ObservedChange/isPlainSetting(_:_:options:prior:)``),
    /// as ``write(_:head:compact:to:)`` writes it: `new` is read where it is, not
    /// copied into the event's fields.
    static func setting<Sink: ByteSink>(into bytes: inout Sink, head: [UInt8], new: borrowing JSONValue?, seq: UInt64,
                                        compact: Bool = false) {
        head.withUnsafeBytes { setting(into: &bytes, head: $0, new: new, seq: seq, compact: compact) }
    }

    /// ``setting(into:head:new:seq:compact:)`` with the head's bytes where
    /// their owner keeps them (``PathNode/eventHeadBytes``): no reference to count.
    static func setting<Sink: ByteSink>(into bytes: inout Sink, head: UnsafeRawBufferPointer, new: borrowing JSONValue?,
                                        seq: UInt64, compact: Bool = false) {
        bytes.append(bytes: head)
        bytes.append(literal: compact ? LineFragment.newMember : LineFragment.settingWithNew)
        switch new {
        case .some(let value): JSONWriter.write(value, to: &bytes)
        case .none: bytes.append(literal: "null")
        }
        appendSeqAndEnd(seq, to: &bytes)
    }

    /// Appends a whole event line from its fields (``ObservedChange``), `head` then
    /// `,"kind":…[,"prior":true][,"initial":true][,"new":…][,"old":…][,"indexes":[…]][,"changedKeyPath":…][,"cause":…][,"resync":true],"seq":N}\n`.
    /// Live dispatch, held, initial and replayed events all end here, so a
    /// replayed event is the live one, byte for byte. A compact event (its
    /// head `{"o":N`, see ``appendCompactStart(_:to:)``) leaves out the kind
    /// when it is `setting`; every other field is the full event's.
    static func write<Sink: ByteSink>(_ event: ObservedChange, head: [UInt8], compact: Bool = false,
                                      to bytes: inout Sink) {
        head.withUnsafeBytes { bytes.append(bytes: $0) }
        // Each append has a fixed cost well above its copy: the usual event
        // (a setting, with new) gets its literal parts in one.
        if case .some(let value) = event.new, event.kind == .setting, !event.isPrior, !event.isInitial {
            bytes.append(literal: compact ? LineFragment.newMember : LineFragment.settingWithNew)
            JSONWriter.write(value ?? .null, to: &bytes)
        } else {
            switch event.kind {
            case .setting: if !compact { bytes.append(literal: LineFragment.kindSetting) }
            case .insertion: bytes.append(literal: LineFragment.kindInsertion)
            case .removal: bytes.append(literal: LineFragment.kindRemoval)
            case .replacement: bytes.append(literal: LineFragment.kindReplacement)
            }
            if event.isPrior { bytes.append(literal: LineFragment.priorTrue) }
            if event.isInitial { bytes.append(literal: LineFragment.initialTrue) }
            if case .some(let value) = event.new {
                bytes.append(literal: LineFragment.newMember)
                JSONWriter.write(value ?? .null, to: &bytes)
            }
        }
        if case .some(let value) = event.old {
            bytes.append(literal: LineFragment.oldMember)
            JSONWriter.write(value ?? .null, to: &bytes)
        }
        if let indexes = event.indexes {
            bytes.append(literal: LineFragment.indexesStart)
            for (position, index) in indexes.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(decimal: index)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        if let changedKeyPath = event.changedKeyPath {
            bytes.append(literal: LineFragment.changedKeyPathMember)
            JSONWriter.writeString(changedKeyPath, to: &bytes)
        }
        switch event.cause {
        case .disconnect?: bytes.append(literal: LineFragment.causeDisconnect)
        case .ttl?: bytes.append(literal: LineFragment.causeTTL)
        case nil: break
        }
        if event.isResync { bytes.append(literal: LineFragment.resyncTrue) }
        appendSeqAndEnd(event.seq, to: &bytes)
    }

    /// ``write(_:head:compact:to:)`` from fields given one by one, for the engine
    /// micro-benchmarks. `new` and `old` are double optionals: `.none` leaves
    /// the field out, `.some(nil)` writes `null`.
    @_spi(Benchmarks) public static func change(
        into bytes: inout [UInt8], head: [UInt8], kind: ChangeKind, new: JSONValue??, old: JSONValue??,
        indexes: [Int]?, seq: UInt64, prior: Bool = false, initial: Bool = false
    ) {
        write(ObservedChange(kind: kind, new: new, old: old, indexes: indexes, changedKeyPath: nil, cause: nil,
                             seq: seq, isPrior: prior, isInitial: initial), head: head, to: &bytes)
    }

    /// Appends `,"seq":N}\n` with one copy (built on the stack).
    static func appendSeqAndEnd<Sink: ByteSink>(_ seq: UInt64, to bytes: inout Sink) {
        appendLine(endingWithSeq: seq, after: LineFragment.seqMember, to: &bytes)
    }

    /// Appends `lead` (at most 24 bytes), the decimal digits of `seq`, then
    /// `}\n`, built on the stack and appended with one copy: each append has a
    /// fixed cost well above that of its bytes. The set's reply and the end
    /// of every event.
    @inline(__always)
    static func appendLine<Sink: ByteSink>(endingWithSeq seq: UInt64, after lead: StaticString, to bytes: inout Sink) {
        var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            let base = raw.baseAddress!
            // Right-aligned: the closing `}\n`, the digits before it, the lead before them.
            var position = raw.count - 2
            base.storeBytes(of: UInt8(ascii: "}"), toByteOffset: position, as: UInt8.self)
            base.storeBytes(of: UInt8(ascii: "\n"), toByteOffset: position + 1, as: UInt8.self)
            position = writeDigits(seq, endingAt: position, in: base)
            position -= lead.utf8CodeUnitCount
            (base + position).copyMemory(from: lead.utf8Start, byteCount: lead.utf8CodeUnitCount)
            bytes.append(bytes: UnsafeRawBufferPointer(start: base + position, count: raw.count - position))
        }
    }

    /// "00" to "99": two digits per division by 100.
    private static var digitPairs: StaticString {
        """
        0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
        5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
        """
    }

    /// Writes `value`'s decimal digits so that they end at offset `end` of
    /// `base`; returns the offset of the first digit.
    @inline(__always)
    private static func writeDigits(_ value: UInt64, endingAt end: Int, in base: UnsafeMutableRawPointer) -> Int {
        let pairs = UnsafeRawPointer(digitPairs.utf8Start)
        var position = end
        var remaining = value
        while remaining >= 100 {
            let pair = Int(remaining % 100) &* 2
            remaining /= 100
            position -= 2
            base.storeBytes(of: pairs.load(fromByteOffset: pair, as: UInt16.self), toByteOffset: position, as: UInt16.self)
        }
        if remaining >= 10 {
            position -= 2
            base.storeBytes(of: pairs.load(fromByteOffset: Int(remaining) &* 2, as: UInt16.self),
                            toByteOffset: position, as: UInt16.self)
        } else {
            position -= 1
            base.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining), toByteOffset: position,
                            as: UInt8.self)
        }
        return position
    }
}
