/// Writes the wire form of events, straight into bytes.
///
/// An event is written as a prefix that ends just after its `seq`; the caller
/// appends the observation's context fragment and ``eventTerminator``. That
/// split is what lets one encoding serve every observation of a change.
enum EventEncoder {
    static let eventTerminator: [UInt8] = Array("}\n".utf8)

    /// `{"event":"change","object":…,"keyPath":…,"kind":…[,"prior":true][,"initial":true][,"new":…][,"old":…][,"indexes":[…]],"seq":N`
    ///
    /// `new` and `old` are double optionals: `.none` leaves the field out,
    /// `.some(nil)` writes `null` (the value is missing).
    static func change(object: String, keyPath: [UInt8], kind: ChangeKind, new: JSONValue??, old: JSONValue??,
                       indexes: [Int]?, seq: UInt64, prior: Bool = false, initial: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        bytes.append(contentsOf: #"{"event":"change","object":"#.utf8)
        JSONWriter.writeString(object, into: &bytes)
        bytes.append(contentsOf: #","keyPath":"#.utf8)
        bytes.append(contentsOf: keyPath)
        bytes.append(contentsOf: #","kind":""#.utf8)
        bytes.append(contentsOf: kind.rawValue.utf8)
        bytes.append(UInt8(ascii: "\""))
        if prior { bytes.append(contentsOf: #","prior":true"#.utf8) }
        if initial { bytes.append(contentsOf: #","initial":true"#.utf8) }
        if case .some(let value) = new {
            bytes.append(contentsOf: #","new":"#.utf8)
            JSONWriter.write(value ?? .null, into: &bytes)
        }
        if case .some(let value) = old {
            bytes.append(contentsOf: #","old":"#.utf8)
            JSONWriter.write(value ?? .null, into: &bytes)
        }
        if let indexes {
            bytes.append(contentsOf: #","indexes":["#.utf8)
            for (position, index) in indexes.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendDecimal(index, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(contentsOf: #","seq":"#.utf8)
        appendDecimal(seq, to: &bytes)
        return bytes
    }

    /// The event that an observation with `options` gets for `change`, at a
    /// key path that is the changed one (`exact`: the change's own kind and
    /// indexes) or above or under it (`setting`). `old` and `new` are the
    /// values at that key path. Live dispatch and replay both encode through
    /// here, so a replayed event is the live one, byte for byte.
    static func change(_ change: ChangeRecord, keyPath: [UInt8], exact: Bool, old: JSONValue?, new: JSONValue?,
                       options: ObservationOptions, prior: Bool) -> [UInt8] {
        let kind = exact ? change.kind : .setting
        return self.change(
            object: change.object, keyPath: keyPath, kind: kind,
            new: !prior && options.contains(.new) && kind != .removal ? .some(new) : .none,
            old: options.contains(.old) && kind != .insertion ? .some(old) : .none,
            indexes: exact && kind != .setting ? change.indexes : nil,
            seq: change.seq, prior: prior)
    }

    /// Appends an integer's decimal digits without going through `String`.
    static func appendDecimal<T: BinaryInteger>(_ value: T, to bytes: inout [UInt8]) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            appendDecimal(UInt64(value.magnitude), to: &bytes)
            return
        }
        var remaining = UInt64(value)
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            } while remaining > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }
}
