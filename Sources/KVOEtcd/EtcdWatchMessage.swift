import KVOValues

/// One message of a watch stream, read with the pull reader: the events'
/// keys and values are decoded from base64 straight out of the message's
/// bytes, with no `JSONValue` tree, dictionary or `String` per event between
/// (a kvod over etcd reads every change of the prefix so; docs/PERFORMANCE.md).
/// The rest of `result` is kept as values, read by the rules of
/// GatewayJSON.swift, as a message parsed whole would be.
struct EtcdWatchMessage {
    /// Whether the message has an `error` member: it is read whole then (``EtcdClient/gatewayError(_:status:)``).
    var hasError = false
    /// Whether it has a `result`, of whatever type.
    var hasResult = false
    /// `result`'s members other than `events`; not an object: none.
    var header: JSONValue?
    var canceled: JSONValue?
    var compactRevision: JSONValue?
    var cancelReason: JSONValue?
    var created: JSONValue?
    var fragment: JSONValue?
    /// `result.events`, read; a field etcd could not have written fails
    /// here, and the failure is told only where the events are used, as when
    /// each event was read from a parsed message. Not an array: none.
    var events: Result<[EtcdWatchEvent], EtcdError> = .success([])

    /// Reads `bytes`, one whole JSON object; a message that is not JSON fails.
    init(_ bytes: [UInt8]) throws(JSONError) {
        let read = bytes.withUnsafeBytes { buffer -> Result<EtcdWatchMessage, JSONError> in
            var reader = JSONReader(buffer)
            do throws(JSONError) {
                let message = try Self(reading: &reader)
                try reader.finish()
                return .success(message)
            } catch {
                return .failure(error)
            }
        }
        self = try read.get()
    }

    private init(reading reader: inout JSONReader) throws(JSONError) {
        guard reader.peekKind() == .object else {
            // Not an object: as a parsed one, it has no members.
            try reader.skipValue()
            return
        }
        try reader.beginObject()
        while let name = try reader.nextMember() {
            switch name {
            case "error": hasError = true
            case "result":
                hasResult = true
                guard reader.peekKind() == .object else { continue }
                try readResult(&reader)
            default: continue
            }
        }
    }

    private mutating func readResult(_ reader: inout JSONReader) throws(JSONError) {
        try reader.beginObject()
        while let name = try reader.nextMember() {
            switch name {
            case "header": header = try reader.readValue()
            case "canceled": canceled = try reader.readValue()
            case "compact_revision": compactRevision = try reader.readValue()
            case "cancel_reason": cancelReason = try reader.readValue()
            case "created": created = try reader.readValue()
            case "fragment": fragment = try reader.readValue()
            case "events":
                guard reader.peekKind() == .array else { continue }
                events = try Self.readEvents(&reader)
            default: continue
            }
        }
    }

    private static func readEvents(_ reader: inout JSONReader) throws(JSONError) -> Result<[EtcdWatchEvent], EtcdError> {
        var events: [EtcdWatchEvent] = []
        var failure: EtcdError?
        try reader.beginArray()
        while try reader.nextElement() {
            // After a failure the rest is still read, to check it is JSON.
            let event = try EtcdWatchEvent(reading: &reader, failure: &failure)
            if failure == nil { events.append(event) }
        }
        if let failure { return .failure(failure) }
        return .success(events)
    }
}

extension EtcdWatchEvent {
    /// Reads an event from `reader`, standing before it (`type` other than
    /// `"DELETE"`: a put; `kv` absent or not an object: an empty one). A field
    /// etcd could not have written sets `failure`, if not set yet, and the read goes on.
    init(reading reader: inout JSONReader, failure: inout EtcdError?) throws(JSONError) {
        kind = .put
        kv = EtcdKeyValue(key: [], value: [])
        prevKV = nil
        guard reader.peekKind() == .object else {
            try reader.skipValue()
            return
        }
        try reader.beginObject()
        while let name = try reader.nextMember() {
            switch name {
            case "type":
                guard reader.peekKind() == .string else { continue }
                kind = try reader.readStringText().isDelete ? .delete : .put
            case "kv": kv = try EtcdKeyValue(reading: &reader, failure: &failure)
            case "prev_kv": prevKV = try EtcdKeyValue(reading: &reader, failure: &failure)
            default: continue
            }
        }
    }
}

extension EtcdKeyValue {
    /// Reads a key from `reader`, standing before it (not an object: an empty
    /// one); a field etcd could not have written sets `failure`, if not set yet.
    init(reading reader: inout JSONReader, failure: inout EtcdError?) throws(JSONError) {
        self.init(key: [], value: [])
        guard reader.peekKind() == .object else {
            try reader.skipValue()
            return
        }
        try reader.beginObject()
        while let name = try reader.nextMember() {
            switch name {
            case "key": key = Self.bytes(try Self.text(&reader), name, &failure)
            case "value": value = Self.bytes(try Self.text(&reader), name, &failure)
            case "create_revision": createRevision = Self.int64(try Self.scalar(&reader), name, &failure)
            case "mod_revision": modRevision = Self.int64(try Self.scalar(&reader), name, &failure)
            case "version": version = Self.int64(try Self.scalar(&reader), name, &failure)
            case "lease": lease = Self.int64(try Self.scalar(&reader), name, &failure)
            default: continue
            }
        }
    }

    /// A bytes member; empty, and `failure` set if not set yet, when etcd could not have written it.
    private static func bytes(_ member: Member, _ name: String, _ failure: inout EtcdError?) -> [UInt8] {
        do {
            return try bytes(member, name)
        } catch {
            if failure == nil { failure = error }
            return []
        }
    }

    /// An int64 member; 0, and `failure` set if not set yet, when etcd could not have written it.
    private static func int64(_ member: JSONValue, _ name: String, _ failure: inout EtcdError?) -> Int64 {
        do {
            return try JSONValue.int64(member, name)
        } catch {
            if failure == nil { failure = error }
            return 0
        }
    }

    /// A member's value: a string as ``JSONText`` (plain text stays in the
    /// message's bytes), anything else as a value.
    private static func text(_ reader: inout JSONReader) throws(JSONError) -> Member {
        reader.peekKind() == .string ? .text(try reader.readStringText()) : .value(try reader.readValue())
    }

    /// A member's value, a string made a `String` (an int64's are short: no allocation).
    private static func scalar(_ reader: inout JSONReader) throws(JSONError) -> JSONValue {
        reader.peekKind() == .string ? .string(try reader.readStringText().string) : try reader.readValue()
    }

    /// A member's value as ``text(_:)`` read it.
    private enum Member {
        case text(JSONText)
        case value(JSONValue)
    }

    /// A bytes member, by GatewayJSON.swift's rules: base64 decoded from the message's bytes when plain.
    private static func bytes(_ member: Member, _ name: String) throws(EtcdError) -> [UInt8] {
        let decoded: [UInt8]?
        switch member {
        case .value(let value): return try JSONValue.bytes(value, name)
        case .text(.plain(let text)): decoded = Base64.decode(text)
        case .text(.decoded(let text)): decoded = Base64.decode(text)
        }
        guard let decoded else { throw .malformedResponse("\(name) is not base64") }
        return decoded
    }
}

extension JSONText {
    /// Whether the text is `DELETE`, etcd's name of a deletion.
    var isDelete: Bool {
        switch self {
        case .plain(let bytes): bytes.elementsEqual("DELETE".utf8)
        case .decoded(let text): text == "DELETE"
        }
    }
}
