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

    /// ``decode(_:)`` of a line held in an array.
    public static func decode(_ line: [UInt8]) -> Outcome {
        line.withUnsafeBytes { decode($0) }
    }

    public static func decode(_ line: UnsafeRawBufferPointer) -> Outcome {
        var uncached = KeyPathCache()
        switch decodeForEngine(line, keyPaths: &uncached) {
        case .plainSet(let object, let keyPath, let value):
            return .request(Request(id: nil, operation: .set(object: object, keyPath: keyPath, value: value)))
        case .outcome(let outcome):
            return outcome
        }
    }

    /// What ``Engine`` acts on: ``Outcome``, with the most common request, a
    /// `set` without an id, apart and unwrapped (building and taking apart a
    /// ``Request`` for it cost a tenth of a set).
    enum EngineOutcome {
        case plainSet(object: String, keyPath: ObservedPath, value: JSONValue)
        case outcome(Outcome)
    }

    static func decodeForEngine(_ line: UnsafeRawBufferPointer, keyPaths: inout KeyPathCache,
                                canonicalSets: Bool = true) -> EngineOutcome {
        // A set as clients write it takes the shortest path (`canonicalSets`
        // false: tests hold it to the others).
        if canonicalSets, let set = RequestScanner.scanCanonicalSet(line) {
            do throws(KVOEngineError) {
                let object = try Fields.objectName(.string(String(decoding: set.object, as: UTF8.self)))
                let keyPath = try keyPaths.path(forBytes: set.keyPath)
                if let refusal = DocumentDepth.refusal(object, keyPath, set.value) { throw refusal }
                return .plainSet(object: object, keyPath: keyPath, value: set.value)
            } catch {
                return .outcome(.failure(id: nil, error: error))
            }
        }
        // Most other requests take the fast path; the full reader handles the
        // rest and explains what is wrong with a bad line.
        var fields = Fields()
        if !RequestScanner.scan(line, into: &fields) {
            fields = Fields()
            if let error = readFields(line, into: &fields) {
                return .outcome(.failure(id: fields.id, error: KVOEngineError(.badJSON, error.message)))
            }
        }
        do throws(KVOEngineError) {
            if fields.id == nil, fields.opCode == .set, !fields.hasChangeModifiers {
                let (object, keyPath, value) = try fields.takeSetOperands(keyPaths: &keyPaths)
                if let refusal = DocumentDepth.refusal(object, keyPath, value) { throw refusal }
                return .plainSet(object: object, keyPath: keyPath, value: value)
            }
            let operation = try fields.operation()
            if let refusal = DocumentDepth.refusal(operation) ?? ComputedKeyPath.refusal(operation) { throw refusal }
            return .outcome(.request(Request(id: fields.id, operation: operation,
                                             condition: try fields.writeCondition(),
                                             lifetime: try fields.valueLifetime())))
        } catch {
            return .outcome(.failure(id: fields.id, error: error))
        }
    }

    /// The full reader: every member through ``JSONReader``, into `fields`
    /// (empty on entry). Returns the JSON error, if any; `fields` then holds
    /// what was read before it (the id, for the reply).
    static func readFields(_ line: UnsafeRawBufferPointer, into fields: inout Fields) -> JSONError? {
        do throws(JSONError) {
            var reader = JSONReader(line, maxDepth: maxDepth)
            try reader.beginObject()
            var nameOffset = 0
            while let name = try reader.nextMemberText(nameOffset: &nameOffset) {
                try fields.read(name, at: nameOffset, from: &reader)
            }
            try reader.finish()
        } catch {
            return error
        }
        return nil
    }
}
