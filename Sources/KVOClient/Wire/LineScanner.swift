#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import KVOValues
import KVOProtocol

/// Reads the lines kvod sends most, change events (full and compact) and
/// plain `ok` replies, member by member with no dictionary: names are matched
/// as bytes, the object and key path strings of the last event are reused
/// when the next one names the same, and only `new`, `old` and `indexes`
/// become ``JSONValue``s. The same strict ``JSONReader`` checks the text.
///
/// Anything else (another member, a repeated one, a member of an unexpected
/// type, an error reply, invalid JSON) is left to ``InboundLine/parse(_:)``:
/// ``scan(_:)`` returns nil, so the full reader decides, and the two always agree.
struct LineScanner {
    /// The strings of the last event's names, reused while the next ones match.
    private var object = ReusedString()
    private var keyPath = ReusedString()
    private var prefix = ReusedString()
    private var changedKeyPath = ReusedString()

    /// The line as ``InboundLine/parse(_:)`` would read it, or nil when the full reader must.
    mutating func scan(_ line: UnsafeRawBufferPointer) -> InboundLine? {
        if let compact = Self.compactSetting(line) { return compact }
        var reader = JSONReader(line, maxDepth: DocumentDepth.readerLimit)
        do throws(JSONError) {
            var seen = ScannedMembers()
            var fields = ScannedFields()
            try reader.beginObject()
            var nameOffset = 0
            while let name = try reader.nextMemberText(nameOffset: &nameOffset) {
                guard case .plain(let bytes) = name, let member = ScannedMembers.Member(bytes) else { return nil }
                guard seen.insert(member) else { return nil }  // repeated: the full reader says why
                guard try read(member, into: &fields, from: &reader, line) else { return nil }
            }
            try reader.finish()
            return Self.inbound(fields, seen)
        } catch {
            return nil
        }
    }

    /// The compact event kvod sends most, in the order kvod writes its members
    /// (`o`, `new`, `old`, `seq`; `new` and `old` each optional: a
    /// `setting` of a plain observation); nil for any other line, which the member
    /// loop of ``scan(_:)`` reads. The values are read by the same strict reader,
    /// nested as deep as the loop allows them.
    private static func compactSetting(_ line: UnsafeRawBufferPointer) -> InboundLine? {
        var at = 0
        func skip(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard line.count - at >= count,
                  memcmp(line.baseAddress! + at, text.utf8Start, count) == 0 else { return false }
            at += count
            return true
        }
        func digits() -> UInt64? {
            let start = at
            let value = decimal(line, &at)
            // JSON has no leading zeros: "01" is the full reader's to refuse.
            return at > start && (line[start] != UInt8(ascii: "0") || at == start + 1) ? value : nil
        }
        func value() -> JSONValue? {
            var reader = JSONReader(UnsafeRawBufferPointer(rebasing: line[at...]), maxDepth: DocumentDepth.readerLimit - 1)
            guard let value = try? reader.readValue() else { return nil }
            at += reader.offset
            return value
        }
        // The pieces kvod's encoder writes these events with (KVOProtocol's LineFragment).
        guard line.baseAddress != nil, skip(LineFragment.compactEventStart), let observation = digits() else { return nil }
        var new: JSONValue?
        var old: JSONValue?
        if skip(LineFragment.newMember) {
            guard let read = value() else { return nil }
            new = read
        }
        if skip(LineFragment.oldMember) {
            guard let read = value() else { return nil }
            old = read
        }
        guard skip(LineFragment.seqMember), let seq = digits(), skip("}"), at == line.count else { return nil }
        let event = WireEvent(object: "", keyPath: nil, kind: .setting, new: new, old: old, indexes: nil,
                              isPrior: false, isInitial: false, seq: seq, changedKeyPath: nil, prefix: nil, cause: nil,
                              coalesced: nil)
        return .compactChange(observation, event, object: nil)
    }

    /// Reads `member`'s value into `fields`; false when it is not of the type the scanner takes.
    private mutating func read(_ member: ScannedMembers.Member, into fields: inout ScannedFields,
                               from reader: inout JSONReader, _ line: UnsafeRawBufferPointer) throws(JSONError)
        -> Bool
    {
        switch member {
        case .event:
            guard reader.peekKind() == .string, case .plain(let bytes) = try reader.readStringText(),
                  Self.equal(bytes, EventType.change.rawValue) else { return false }
        case .ok:
            guard reader.peekKind() == .bool, case .bool(true) = try reader.readValue() else { return false }
        case .id: try reader.skipValue()
        case .observation:
            fields.observation = try Self.unsigned(&reader, line)
            return fields.observation != nil
        case .seq:
            fields.seq = try Self.unsigned(&reader, line)
            return fields.seq != nil
        case .coalesced:
            guard let count = try Self.unsigned(&reader, line), let small = Int(exactly: count) else { return false }
            fields.coalesced = small
        case .object:
            fields.object = try Self.text(&reader, reusing: &object)
            return fields.object != nil
        case .keyPath:
            fields.keyPath = try Self.text(&reader, reusing: &keyPath)
            return fields.keyPath != nil
        case .prefix:
            fields.prefix = try Self.text(&reader, reusing: &prefix)
            return fields.prefix != nil
        case .changedKeyPath:
            fields.changedKeyPath = try Self.text(&reader, reusing: &changedKeyPath)
            return fields.changedKeyPath != nil
        case .cause:
            guard let cause = try Self.text(&reader) else { return false }
            fields.cause = ChangeCause(cause)
        case .kind:
            fields.kind = try Self.kind(&reader)
            return fields.kind != nil
        case .new: fields.new = try reader.readValue()
        case .old: fields.old = try reader.readValue()
        case .indexes:
            guard case .array(let positions) = try reader.readValue() else { return false }
            fields.indexes = positions.compactMap { if case .number(let n) = $0 { n.intValue } else { nil } }
        case .prior, .initial:
            guard reader.peekKind() == .bool, case .bool(let flag) = try reader.readValue() else { return false }
            if member == .prior { fields.isPrior = flag } else { fields.isInitial = flag }
        }
        return true
    }

    /// The line the members make, when it is one the scanner knows whole.
    private static func inbound(_ fields: ScannedFields, _ seen: ScannedMembers) -> InboundLine? {
        if seen.contains(.ok) {
            // A plain success: `ok`, perhaps `id` and `seq`, nothing else.
            guard seen.isSubset(of: [.ok, .id, .seq]) else { return nil }
            var members = JSONObject()
            if let seq = fields.seq { members[Field.seq.rawValue] = .number(JSONNumber(validatedLiteral: String(seq))) }
            return .reply(.success(members), seq: fields.seq)
        }
        guard seen.isSubset(of: ScannedMembers.event), let seq = fields.seq else { return nil }
        if let observation = fields.observation {
            guard !seen.contains(.event), !seen.contains(.keyPath), !seen.contains(.prefix) else { return nil }
            return .compactChange(observation, fields.event(object: "", keyPath: nil, prefix: nil,
                                                             kind: fields.kind ?? .setting, seq: seq),
                                  object: fields.object)
        }
        guard seen.contains(.event), let object = fields.object, let kind = fields.kind else { return nil }
        return .event(fields.event(object: object, keyPath: fields.keyPath, prefix: fields.prefix, kind: kind,
                                   seq: seq))
    }

    // MARK: Values

    /// A string value, as the `String` last made from the same bytes when there is one; nil for another type.
    private static func text(_ reader: inout JSONReader, reusing cache: inout ReusedString) throws(JSONError)
        -> String?
    {
        guard reader.peekKind() == .string else { return nil }
        switch try reader.readStringText() {
        case .plain(let bytes): return cache.string(for: bytes)
        case .decoded(let string): return string
        }
    }

    private static func text(_ reader: inout JSONReader) throws(JSONError) -> String? {
        guard reader.peekKind() == .string else { return nil }
        return try reader.readStringText().string
    }

    /// An integer value that `UInt64(literal)` reads, as the full reader's callers do; nil for any other value.
    private static func unsigned(_ reader: inout JSONReader, _ line: UnsafeRawBufferPointer) throws(JSONError)
        -> UInt64?
    {
        guard reader.peekKind() == .number else { return nil }
        var at = reader.offset
        try reader.skipValue()
        let value = decimal(line, &at)
        return at == reader.offset ? value : nil
    }

    /// The digits from `at` on, as far as they go (none: 0), and `at` after them; nil when they overflow a UInt64.
    @inline(__always)
    private static func decimal(_ line: UnsafeRawBufferPointer, _ at: inout Int) -> UInt64? {
        var value: UInt64 = 0
        while at < line.count, line[at] >= UInt8(ascii: "0"), line[at] <= UInt8(ascii: "9") {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(line[at] - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
            at += 1
        }
        return value
    }

    static func equal(_ bytes: UnsafeRawBufferPointer, _ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == bytes.count else { return false }
        return utf8.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).elementsEqual(bytes) }
            ?? utf8.elementsEqual(bytes)
    }

    /// A `kind` value: told from its bytes, no `String` made for it.
    private static func kind(_ reader: inout JSONReader) throws(JSONError) -> ChangeKind? {
        guard reader.peekKind() == .string else { return nil }
        switch try reader.readStringText() {
        case .plain(let bytes):
            for kind in [ChangeKind.setting, .insertion, .removal, .replacement] where equal(bytes, kind.rawValue) {
                return kind
            }
            return nil
        case .decoded(let name): return ChangeKind(rawValue: name)
        }
    }
}

/// What a scanned line said, member by member.
private struct ScannedFields {
    var observation: UInt64?
    var seq: UInt64?
    var coalesced: Int?
    var object: String?
    var keyPath: String?
    var prefix: String?
    var changedKeyPath: String?
    var cause: ChangeCause?
    var kind: ChangeKind?
    var new: JSONValue?
    var old: JSONValue?
    var indexes: [Int]?
    var isPrior = false
    var isInitial = false

    func event(object: String, keyPath: String?, prefix: String?, kind: ChangeKind, seq: UInt64) -> WireEvent {
        WireEvent(object: object, keyPath: keyPath, kind: kind, new: new, old: old,
                  indexes: indexes, isPrior: isPrior, isInitial: isInitial, seq: seq, changedKeyPath: changedKeyPath,
                  prefix: prefix, cause: cause, coalesced: coalesced)
    }
}

/// The members the scanner knows, as bits, so a repeated one is caught.
private struct ScannedMembers: ExpressibleByArrayLiteral {
    var rawValue: UInt32 = 0

    enum Member: UInt32, CaseIterable {
        case event, ok, id, observation, seq, coalesced, object, keyPath, prefix, changedKeyPath, cause, kind
        case new, old, indexes, prior, initial

        /// The member these bytes name, if the scanner knows it: told by length
        /// and first byte, then checked whole.
        init?(_ bytes: UnsafeRawBufferPointer) {
            guard let first = bytes.first else { return nil }
            let candidate: Member
            switch (bytes.count, first) {
            case (1, UInt8(ascii: "o")): candidate = .observation
            case (2, UInt8(ascii: "o")): candidate = .ok
            case (2, UInt8(ascii: "i")): candidate = .id
            case (3, UInt8(ascii: "s")): candidate = .seq
            case (3, UInt8(ascii: "n")): candidate = .new
            case (3, UInt8(ascii: "o")): candidate = .old
            case (4, UInt8(ascii: "k")): candidate = .kind
            case (5, UInt8(ascii: "e")): candidate = .event
            case (5, UInt8(ascii: "p")): candidate = .prior
            case (5, UInt8(ascii: "c")): candidate = .cause
            case (6, UInt8(ascii: "o")): candidate = .object
            case (6, UInt8(ascii: "p")): candidate = .prefix
            case (7, UInt8(ascii: "k")): candidate = .keyPath
            case (7, UInt8(ascii: "i")): candidate = bytes[2] == UInt8(ascii: "i") ? .initial : .indexes
            case (9, UInt8(ascii: "c")): candidate = .coalesced
            case (14, UInt8(ascii: "c")): candidate = .changedKeyPath
            default: return nil
            }
            guard Self.spellings[Int(candidate.rawValue)].withUnsafeBytes({ $0.elementsEqual(bytes) }) else {
                return nil
            }
            self = candidate
        }

        /// Each member's name as bytes, by raw value: its field's, in case order.
        private static let spellings = [
            Field.event, .ok, .id, .observation, .seq, .coalesced, .object, .keyPath, .prefix, .changedKeyPath, .cause,
            .kind, .new, .old, .indexes, .prior, .initial,
        ].map { Array($0.rawValue.utf8) }
    }

    /// The members an event may have.
    static let event: ScannedMembers = [
        .event, .observation, .seq, .coalesced, .object, .keyPath, .prefix, .changedKeyPath, .cause, .kind, .new, .old,
        .indexes, .prior, .initial,
    ]

    init() {}

    init(arrayLiteral members: Member...) {
        rawValue = members.reduce(0) { $0 | 1 << $1.rawValue }
    }

    func contains(_ member: Member) -> Bool { rawValue & 1 << member.rawValue != 0 }

    func isSubset(of other: ScannedMembers) -> Bool { rawValue & ~other.rawValue == 0 }

    /// Adds `member`; false when it was there already.
    mutating func insert(_ member: Member) -> Bool {
        guard !contains(member) else { return false }
        rawValue |= 1 << member.rawValue
        return true
    }
}

/// The `String` last made from some bytes, handed out again while they repeat.
private struct ReusedString {
    private var bytes: [UInt8] = []
    private var last: String?

    mutating func string(for bytes: UnsafeRawBufferPointer) -> String {
        if let last, self.bytes.withUnsafeBytes({ $0.elementsEqual(bytes) }) { return last }
        let made = String(decoding: bytes, as: UTF8.self)
        self.bytes = Array(bytes)
        last = made
        return made
    }
}
