import KVOProtocol
import KVOValues

/// The reply to `observations`: one page of the client's observations,
/// bounded in entries (`limit`) and in bytes.
extension Engine {
    /// A page stops after the entry that takes it past this many bytes of
    /// JSON (contexts may be large): a reply stays near the size of a request line.
    public static let observationsPageBytes = 1 << 20

    func writeObservationsPage(after: UInt64?, limit: Int, for client: ClientController,
                               into reply: inout ReplyEncoder) {
        let (page, more) = client.observations(after: after, limit: limit)
        var written = 0
        reply.field(.observations) { bytes in
            let start = bytes.count
            bytes.append(UInt8(ascii: "["))
            for info in page where bytes.count - start < Self.observationsPageBytes {
                if written > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeEntry(info, into: &bytes)
                written += 1
            }
            bytes.append(UInt8(ascii: "]"))
        }
        let cut = more || written < page.count
        reply.field(.more, .bool(cut))
        if cut, written > 0 {
            reply.field(.next, .string(String(page[written - 1].serial)))
        }
    }

    /// `{"object"|"prefix":…[,"keyPath":…],"options":[…],"policy":…[,"distinct":true][,"kinds":[…]][,"throttle":N][,"ack":true][,"compact":true,"o":N][,"context":…],"eventsSent":N,"eventsCoalesced":N,"lastSeqSent":N[,"lastAckedSeq":N]}`,
    /// written straight from the observation (its context's bytes are ready).
    static func writeEntry(_ info: ObservationInfo, into bytes: inout [UInt8]) {
        let scope = info.scope
        bytes.append(UInt8(ascii: "{"))
        appendName(scope.isPrefix ? .prefix : .object, to: &bytes)
        JSONWriter.writeString(scope.name, into: &bytes)
        let keyPath = info.keyPath
        if !keyPath.isWholeDocument {
            appendMember(.keyPath, to: &bytes)
            JSONWriter.writeString(keyPath.description, into: &bytes)
        }
        bytes.append(contentsOf: optionsAndPolicy[Int(info.options.rawValue) | (info.policy == .disconnect ? 16 : 0)])
        if info.isQuiet {
            let filter = info.filter
            if filter.distinct { appendMember(.distinct, to: &bytes, true) }
            if let kinds = filter.kinds {
                appendMember(.kinds, to: &bytes)
                JSONWriter.write(.array(kinds.map { .string($0.rawValue) }), into: &bytes)
            }
            if let throttle = filter.throttle {
                appendMember(.throttle, to: &bytes)
                bytes.append(contentsOf: String(throttle).utf8)
            }
        }
        if info.filter.acknowledges { appendMember(.ack, to: &bytes, true) }
        if info.isCompact {
            appendMember(.compact, to: &bytes, true)
            appendMember(.observation, to: &bytes)
            bytes.append(decimal: info.number)
        }
        if let context = info.contextFragment { bytes.append(contentsOf: context) }
        for (name, value) in [(KVOProtocol.Field.eventsSent, info.eventsSent), (.eventsCoalesced, info.eventsCoalesced),
                              (.lastSeqSent, info.lastSeqSent)] {
            appendMember(name, to: &bytes)
            bytes.append(contentsOf: String(value).utf8)
        }
        if info.filter.acknowledges {
            appendMember(.lastAckedSeq, to: &bytes)
            bytes.append(contentsOf: String(info.owner.ackedSeq).utf8)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `"name":`, a member's name.
    private static func appendName(_ name: KVOProtocol.Field, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: name.rawValue.utf8)
        bytes.append(contentsOf: #"":"#.utf8)
    }

    /// `,"name":`, a member after the first; with `true`, `,"name":true`.
    private static func appendMember(_ name: KVOProtocol.Field, to bytes: inout [UInt8], _ isTrue: Bool = false) {
        bytes.append(UInt8(ascii: ","))
        appendName(name, to: &bytes)
        if isTrue { bytes.append(contentsOf: "true".utf8) }
    }

    /// `,"options":[…],"policy":…` for each set of options (low four bits)
    /// and policy (bit 4), encoded once.
    private static let optionsAndPolicy: [[UInt8]] = (0..<32).map { bits in
        let options = ObservationOptions(rawValue: UInt8(bits & 0x0F))
        let policy: ObservationPolicy = bits & 16 != 0 ? .disconnect : .coalesce
        var bytes: [UInt8] = []
        appendMember(.options, to: &bytes)
        JSONWriter.write(.array(options.wireNames.map(JSONValue.string)), into: &bytes)
        appendMember(.policy, to: &bytes)
        JSONWriter.writeString(policy.rawValue, into: &bytes)
        return bytes
    }
}
