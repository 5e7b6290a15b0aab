/// Turns one line into a ``Request``, reading the bytes straight into its
/// fields (no intermediate dictionary, no Foundation: this is the hot path).
///
/// JSON that is malformed, not an object, nests too deep or repeats a member
/// is `bad_json`; a missing or mistyped field is `bad_request` and names the
/// field; an unknown `op` is `unknown_op`. Whatever fails, the `id` is kept
/// when it could be read, so the error reply still echoes it.
public enum RequestDecoder {
    /// The request, or the error to reply with and the id to echo.
    public enum Outcome {
        case request(Request)
        case failure(id: JSONValue?, error: KVOEngineError)
    }

    /// The deepest nesting a line may have.
    public static let maxDepth = 512
    /// The most key paths or indexes one request may name.
    public static let maxListCount = 10_000

    public static func decode(_ line: UnsafeRawBufferPointer) -> Outcome {
        var fields = Fields()
        do throws(JSONError) {
            var reader = JSONReader(line, maxDepth: maxDepth)
            try reader.beginObject()
            var nameOffset = 0
            while let name = try reader.nextMemberText(nameOffset: &nameOffset) {
                try fields.read(name, at: nameOffset, from: &reader)
            }
            try reader.finish()
        } catch {
            return .failure(id: fields.id, error: KVOEngineError(.badJSON, error.message))
        }
        do throws(KVOEngineError) {
            return .request(Request(id: fields.id, operation: try fields.operation()))
        } catch {
            return .failure(id: fields.id, error: error)
        }
    }
}

/// The members a request may have. Names are matched on their bytes, and a
/// bit per field catches repeats, so the hot path makes no `String` for them.
private enum Field: Int, CaseIterable {
    case id, op, object, keyPath, keyPaths, value, values, index, indexes, options, context

    var name: String {
        switch self {
        case .id: "id"
        case .op: "op"
        case .object: "object"
        case .keyPath: "keyPath"
        case .keyPaths: "keyPaths"
        case .value: "value"
        case .values: "values"
        case .index: "index"
        case .indexes: "indexes"
        case .options: "options"
        case .context: "context"
        }
    }

    init?(_ text: JSONText) {
        switch text {
        case .plain(let bytes): self.init(plain: bytes)
        // Escaped or non-ASCII: compared as Swift strings, as the names were before.
        case .decoded(let name): guard let field = Field.allCases.first(where: { $0.name == name }) else { return nil }
            self = field
        }
    }

    private init?(plain bytes: UnsafeRawBufferPointer) {
        let field: Field
        switch (bytes.count, bytes.first ?? 0) {
        case (2, UInt8(ascii: "o")): field = .op
        case (2, UInt8(ascii: "i")): field = .id
        case (5, UInt8(ascii: "v")): field = .value
        case (5, UInt8(ascii: "i")): field = .index
        case (6, UInt8(ascii: "o")): field = .object
        case (6, UInt8(ascii: "v")): field = .values
        case (7, UInt8(ascii: "k")): field = .keyPath
        case (7, UInt8(ascii: "o")): field = .options
        case (7, UInt8(ascii: "c")): field = .context
        case (7, UInt8(ascii: "i")): field = .indexes
        case (8, UInt8(ascii: "k")): field = .keyPaths
        default: return nil
        }
        // Length and first byte pick the only candidate; the bytes must still match it.
        guard bytes.elementsEqual(field.staticName) else { return nil }
        self = field
    }

    private var staticName: StaticString {
        switch self {
        case .id: "id"
        case .op: "op"
        case .object: "object"
        case .keyPath: "keyPath"
        case .keyPaths: "keyPaths"
        case .value: "value"
        case .values: "values"
        case .index: "index"
        case .indexes: "indexes"
        case .options: "options"
        case .context: "context"
        }
    }
}

/// The `op` names, matched on their bytes.
private enum OpCode: String, CaseIterable {
    case set, get, delete, insert, remove, replace, observe, unobserve, unobserveAll, ping, info, observations

    init?(_ text: JSONText) {
        switch text {
        case .plain(let bytes):
            // The common ops first: set, then observe.
            if bytes.elementsEqual("set") {
                self = .set
            } else if bytes.elementsEqual("observe") {
                self = .observe
            } else {
                guard let code = OpCode.allCases.first(where: { bytes.elementsEqual($0.staticName) }) else { return nil }
                self = code
            }
        case .decoded(let name):
            self.init(rawValue: name)
        }
    }

    var staticName: StaticString {
        switch self {
        case .set: "set"
        case .get: "get"
        case .delete: "delete"
        case .insert: "insert"
        case .remove: "remove"
        case .replace: "replace"
        case .observe: "observe"
        case .unobserve: "unobserve"
        case .unobserveAll: "unobserveAll"
        case .ping: "ping"
        case .info: "info"
        case .observations: "observations"
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `literal`'s UTF-8.
    @inline(__always)
    fileprivate func elementsEqual(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        for index in 0..<count where self[index] != literal.utf8Start[index] { return false }
        return true
    }
}

/// The members of a request object as read, before they are checked.
private struct Fields {
    var id: JSONValue?
    /// The op, when it is a string naming one; else `op` keeps what was sent.
    var opCode: OpCode?
    var op: JSONValue?
    var object: JSONValue?
    var keyPath: JSONValue?
    var keyPaths: JSONValue?
    var value: JSONValue?
    var values: JSONValue?
    var index: JSONValue?
    var indexes: JSONValue?
    var options: JSONValue?
    var context: JSONValue?
    var unknown: String?
    /// A bit per ``Field`` read so far.
    private var seen: UInt16 = 0
    /// Names that are no field, kept only to refuse them repeated.
    private var unknownNames: [String] = []

    /// Reads one member's value, refusing a name that repeats (which would
    /// make a request ambiguous) as the reader's own check would.
    mutating func read(_ name: JSONText, at nameOffset: Int, from reader: inout JSONReader) throws(JSONError) {
        guard let field = Field(name) else {
            let text = name.string
            if unknownNames.contains(text) { throw .duplicateMember(text, at: nameOffset) }
            unknownNames.append(text)
            unknown = unknown ?? text
            try reader.skipValue()
            return
        }
        let bit = UInt16(1) << field.rawValue
        guard seen & bit == 0 else { throw .duplicateMember(field.name, at: nameOffset) }
        seen |= bit
        if field == .op, reader.peekKind() == .string {
            let text = try reader.readStringText()
            opCode = OpCode(text)
            if opCode == nil { op = .string(text.string) }
            return
        }
        let value = try reader.readValue()
        switch field {
        case .id: id = value
        case .op: op = value
        case .object: object = value
        case .keyPath: keyPath = value
        case .keyPaths: keyPaths = value
        case .value: self.value = value
        case .values: values = value
        case .index: index = value
        case .indexes: indexes = value
        case .options: options = value
        case .context: context = value
        }
    }

    func operation() throws(KVOEngineError) -> Operation {
        guard let opCode else {
            guard let op else { throw .badRequest("missing field \"op\"") }
            guard case .string(let name) = op else { throw .badRequest("field \"op\" must be a string") }
            throw KVOEngineError(.unknownOp, "unknown op \"\(name)\"")
        }
        if let unknown { throw .badRequest("unknown field \"\(unknown)\" for op \"\(opCode.rawValue)\"") }
        switch opCode {
        case .set:
            return .set(object: try objectName(), keyPath: try requiredKeyPath(), value: try required(value, "value"))
        case .get:
            return .get(object: try objectName(), keyPath: try optionalKeyPath())
        case .delete:
            return .delete(object: try objectName(), keyPath: try optionalKeyPath())
        case .insert:
            let index = try index.map { v throws(KVOEngineError) in try Self.integer(v, "index") }
            return .insert(object: try objectName(), keyPath: try requiredKeyPath(), index: index,
                           values: try valueOrValues())
        case .remove:
            return .remove(object: try objectName(), keyPath: try requiredKeyPath(),
                           indexes: try indexOrIndexes().sorted())
        case .replace:
            let positions = try indexOrIndexes()
            let replacements = try valueOrValues()
            guard positions.count == replacements.count else {
                throw .badRequest("replace needs as many values (\(replacements.count)) as indexes (\(positions.count))")
            }
            // Ascending indexes, each value kept with the index it was given for.
            let pairs = zip(positions, replacements).sorted { $0.0 < $1.0 }
            return .replace(object: try objectName(), keyPath: try requiredKeyPath(), indexes: pairs.map(\.0),
                            values: pairs.map(\.1))
        case .observe:
            guard let paths = try keyPathList() else { throw .badRequest("missing field \"keyPath\" or \"keyPaths\"") }
            return .observe(object: try objectName(), keyPaths: paths, options: try observationOptions(),
                            context: context)
        case .unobserve:
            return .unobserve(object: try objectName(), keyPaths: try keyPathList())
        case .unobserveAll: return .unobserveAll
        case .ping: return .ping
        case .info: return .info
        case .observations: return .observations
        }
    }

    // MARK: Field checks

    private func required(_ field: JSONValue?, _ name: String) throws(KVOEngineError) -> JSONValue {
        guard let field else { throw .badRequest("missing field \"\(name)\"") }
        return field
    }

    private func objectName() throws(KVOEngineError) -> String {
        guard case .string(let name) = try required(object, "object") else {
            throw .badRequest("field \"object\" must be a string")
        }
        guard !name.isEmpty, name.utf8.count <= 1024 else {
            throw .badRequest("field \"object\" must be 1 to 1024 bytes long")
        }
        return name
    }

    private func requiredKeyPath() throws(KVOEngineError) -> ObservedPath {
        try Self.keyPath(try required(keyPath, "keyPath"), "keyPath")
    }

    private func optionalKeyPath() throws(KVOEngineError) -> ObservedPath? {
        guard let keyPath else { return nil }
        return try Self.keyPath(keyPath, "keyPath")
    }

    /// `keyPath` or `keyPaths`, not both; nil when neither is given.
    private func keyPathList() throws(KVOEngineError) -> [ObservedPath]? {
        switch (keyPath, keyPaths) {
        case (nil, nil): return nil
        case (.some(let one), nil): return [try Self.keyPath(one, "keyPath")]
        case (nil, .some(.array(let many))):
            guard !many.isEmpty else { throw .badRequest("field \"keyPaths\" must not be empty") }
            guard many.count <= RequestDecoder.maxListCount else {
                throw KVOEngineError(.limitExceeded, "more than \(RequestDecoder.maxListCount) keyPaths")
            }
            var paths: [ObservedPath] = []
            for element in many { paths.append(try Self.keyPath(element, "keyPaths")) }
            return paths
        case (nil, .some): throw .badRequest("field \"keyPaths\" must be an array of strings")
        default: throw .badRequest("give \"keyPath\" or \"keyPaths\", not both")
        }
    }

    private func valueOrValues() throws(KVOEngineError) -> [JSONValue] {
        switch (value, values) {
        case (.some(let one), nil): return [one]
        case (nil, .some(.array(let many))):
            guard !many.isEmpty else { throw .badRequest("field \"values\" must not be empty") }
            return many
        case (nil, .some): throw .badRequest("field \"values\" must be an array")
        case (nil, nil): throw .badRequest("missing field \"value\" or \"values\"")
        default: throw .badRequest("give \"value\" or \"values\", not both")
        }
    }

    /// `index` or `indexes`, in the order given; duplicates are refused.
    private func indexOrIndexes() throws(KVOEngineError) -> [Int] {
        switch (index, indexes) {
        case (.some(let one), nil): return [try Self.integer(one, "index")]
        case (nil, .some(.array(let many))):
            guard !many.isEmpty else { throw .badRequest("field \"indexes\" must not be empty") }
            guard many.count <= RequestDecoder.maxListCount else {
                throw KVOEngineError(.limitExceeded, "more than \(RequestDecoder.maxListCount) indexes")
            }
            var positions: [Int] = []
            for element in many { positions.append(try Self.integer(element, "indexes")) }
            let ascending = positions.sorted()
            for i in ascending.indices.dropFirst() where ascending[i] == ascending[i - 1] {
                throw .badRequest("field \"indexes\" repeats \(ascending[i])")
            }
            return positions
        case (nil, .some): throw .badRequest("field \"indexes\" must be an array of integers")
        case (nil, nil): throw .badRequest("missing field \"index\" or \"indexes\"")
        default: throw .badRequest("give \"index\" or \"indexes\", not both")
        }
    }

    private func observationOptions() throws(KVOEngineError) -> ObservationOptions {
        guard let options else { return [] }
        guard case .array(let names) = options else {
            throw .badRequest("field \"options\" must be an array of \"new\", \"old\", \"initial\", \"prior\"")
        }
        var result: ObservationOptions = []
        for name in names {
            guard case .string(let text) = name, let option = ObservationOptions(wireName: text) else {
                throw .badRequest("field \"options\": unknown option \(name.jsonString)")
            }
            result.insert(option)
        }
        return result
    }

    private static func keyPath(_ value: JSONValue, _ field: String) throws(KVOEngineError) -> ObservedPath {
        guard case .string(let text) = value else { throw .badRequest("field \"\(field)\" must be a string") }
        return try ObservedPath(parsing: text)
    }

    private static func integer(_ value: JSONValue, _ field: String) throws(KVOEngineError) -> Int {
        guard case .number(let number) = value, let integer = number.intValue, integer >= 0 else {
            throw .badRequest("field \"\(field)\" must hold non-negative integers")
        }
        return integer
    }
}
