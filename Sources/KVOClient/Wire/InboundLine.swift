import KVOValues
import KVOProtocol

/// One line from kvod, read: an event or a reply (docs/PROTOCOL.md).
enum InboundLine {
    case event(WireEvent)
    /// A compact event (read by ``LineScanner`` or by ``parse(_:)``): its observation's number, the
    /// event with no object, key path or prefix yet (``WireEvent/place(in:object:)``
    /// fills them in), and the `object` member, which a prefix's events have;
    /// its members name neither the object (but for a prefix's) nor the key path.
    case compactChange(UInt64, WireEvent, object: String?)
    /// A reply's members other than `ok` and `id`, or its error; and the
    /// `seq` it carries, if any (an error's in its error object, as
    /// `not_found` from `get` has one).
    case reply(Result<JSONObject, KVOClientError>, seq: UInt64?)
    /// An event of a kind this client does not know (a later protocol's); skipped.
    case otherEvent

    /// Reads one line; anything that is not a JSON object shaped like an
    /// event or a reply is a protocol violation.
    static func parse(_ line: UnsafeRawBufferPointer) throws(KVOClientError) -> InboundLine {
        let members: JSONObject
        do throws(JSONError) {
            var reader = JSONReader(line, maxDepth: DocumentDepth.readerLimit)
            guard case .object(let object) = try reader.readValue() else { throw JSONError("not an object", at: 0) }
            try reader.finish()
            members = object
        } catch {
            throw violation("a line that is not a JSON object (\(error.message))", line)
        }
        if members[.ok] == nil, let observation = members.unsigned(.observation) {
            guard let event = WireEvent(compact: members) else { throw violation("a malformed compact event", line) }
            var object: String?
            if case .string(let text)? = members[.object] { object = text }
            return .compactChange(observation, event, object: object)
        }
        if let event = members[.event] {
            guard event == .string(EventType.change.rawValue) else { return .otherEvent }
            guard let change = WireEvent(members) else { throw violation("a malformed change event", line) }
            return .event(change)
        }
        switch members[.ok] {
        case .bool(true):
            var fields = members
            fields.removeValue(forKey: Field.ok.rawValue)
            fields.removeValue(forKey: Field.id.rawValue)
            return .reply(.success(fields), seq: fields.unsigned(.seq))
        case .bool(false):
            guard case .object(let error)? = members[.error], case .string(let code)? = error[.code] else {
                throw violation("an error reply without an error code", line)
            }
            let message: String
            if case .string(let text)? = error[.message] { message = text } else { message = code }
            // The await counts only for `timeout`, so that other errors compare as they always did.
            let awaited = code == KVOClientError.Code.timeout.rawValue
            let failure = KVOClientError(.init(code), message, modSeq: error.unsigned(.modSeq),
                                         index: error.integer(.index), seq: awaited ? error.unsigned(.seq) : nil,
                                         observers: awaited ? error.integer(.observers) : nil,
                                         acknowledged: awaited ? error.integer(.acknowledged) : nil)
            return .reply(.failure(failure), seq: error.unsigned(.seq))
        default:
            throw violation("a line that is neither an event nor a reply", line)
        }
    }

    /// The protocol violation of a line kvod sent: `what` it is, and the line's first 200 bytes.
    static func violation(_ what: String, _ line: UnsafeRawBufferPointer) -> KVOClientError {
        let text = String(decoding: line.prefix(200), as: UTF8.self)
        return KVOClientError(.protocolViolation, "kvod sent \(what): \(text)")
    }
}

/// A `change` event as it came off the wire. A class: an event passes from
/// the scanner through routing as one reference, where a struct of thirteen
/// fields was copied member by member at each step (docs/PERFORMANCE.md).
final class WireEvent {
    var object: String
    /// nil for an observation of the whole document.
    var keyPath: String?
    var kind: ChangeKind
    var new: JSONValue?
    var old: JSONValue?
    var indexes: [Int]?
    var isPrior: Bool
    var isInitial: Bool
    var seq: UInt64
    /// Where the change was made, when not at ``keyPath``; nil for a whole-document change.
    var changedKeyPath: String?
    /// The prefix of the observation the event is for, if it is a prefix observation.
    var prefix: String?
    /// Why kvod deleted the value itself (`disconnect`, `ttl`), if it did.
    var cause: ChangeCause?
    /// How many earlier events this one stands for (a throttle's or a slow reader's), if any.
    var coalesced: Int?

    /// The observation the event is for.
    var key: ObservationKey {
        if let prefix { ObservationKey(object: prefix, keyPath: keyPath, isPrefix: true) }
        else { ObservationKey(object: object, keyPath: keyPath) }
    }

    init(object: String, keyPath: String?, kind: ChangeKind, new: JSONValue?, old: JSONValue?, indexes: [Int]?,
         isPrior: Bool, isInitial: Bool, seq: UInt64, changedKeyPath: String?, prefix: String?, cause: ChangeCause?,
         coalesced: Int?) {
        self.object = object
        self.keyPath = keyPath
        self.kind = kind
        self.new = new
        self.old = old
        self.indexes = indexes
        self.isPrior = isPrior
        self.isInitial = isInitial
        self.seq = seq
        self.changedKeyPath = changedKeyPath
        self.prefix = prefix
        self.cause = cause
        self.coalesced = coalesced
    }

    /// Makes a scanned compact event an event of the observation `key`, as
    /// ``init(compact:)`` reads it; false for a prefix's event without its object.
    func place(in key: ObservationKey, object: String?) -> Bool {
        keyPath = key.keyPath
        if key.isPrefix {
            guard let object else { return false }
            self.object = object
            prefix = key.object
        } else {
            self.object = key.object
            prefix = nil
        }
        return true
    }

    convenience init?(_ members: JSONObject) {
        guard case .string(let object)? = members[.object],
              case .string(let kindName)? = members[.kind], let kind = ChangeKind(rawValue: kindName)
        else { return nil }
        var keyPath: String?
        switch members[.keyPath] {
        case .string(let path)?: keyPath = path
        case nil: keyPath = nil
        default: return nil
        }
        var prefix: String?
        if case .string(let text)? = members[.prefix] { prefix = text }
        self.init(members, object: object, keyPath: keyPath, prefix: prefix, kind: kind)
    }

    /// A compact event (docs/PROTOCOL.md, "Compact events"), with no object,
    /// key path or prefix yet: its observation's key stands for the object (a
    /// prefix observation's events name it), the key path and the prefix, which
    /// ``place(in:object:)`` fills in; no kind means `setting`.
    convenience init?(compact members: JSONObject) {
        var kind = ChangeKind.setting
        if let kindName = members[.kind] {
            guard case .string(let name) = kindName, let named = ChangeKind(rawValue: name) else { return nil }
            kind = named
        }
        self.init(members, object: "", keyPath: nil, prefix: nil, kind: kind)
    }

    /// The members both forms share, after what names the observation.
    private init?(_ members: JSONObject, object: String, keyPath: String?, prefix: String?, kind: ChangeKind) {
        guard let seq = members.unsigned(.seq) else { return nil }
        self.object = object
        self.keyPath = keyPath
        self.prefix = prefix
        if case .string(let path)? = members[.changedKeyPath] { changedKeyPath = path }
        if case .string(let cause)? = members[.cause] { self.cause = ChangeCause(cause) }
        coalesced = members.integer(.coalesced)
        self.kind = kind
        self.seq = seq
        new = members[.new]
        old = members[.old]
        isPrior = members[.prior] == .bool(true)
        isInitial = members[.initial] == .bool(true)
        if case .array(let positions)? = members[.indexes] {
            indexes = positions.compactMap { if case .number(let n) = $0 { n.intValue } else { nil } }
        }
    }

    /// The change as one observation sees it: only the values it asked for,
    /// its own context, and the epoch its seq counts in.
    func change(options: ObservationOptions, context: JSONValue?, epoch: String?) -> Change {
        Change(object: object, keyPath: keyPath, kind: kind,
               new: options.contains(.new) ? new : .none, old: options.contains(.old) ? old : .none,
               indexes: indexes, isPrior: isPrior, isInitial: isInitial, seq: seq, context: context,
               changedKeyPath: changedKeyPath, prefix: prefix, cause: cause, epoch: epoch, coalesced: coalesced)
    }
}
