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

    /// The request in `line` (one line, without its newline), or the error to reply with.
    public static func decode(_ line: UnsafeRawBufferPointer) -> Outcome {
        var uncached = KeyPathCache()
        return outcome(of: decodeForEngine(line, keyPaths: &uncached))
    }

    /// ``decode(_:)`` by the full reader alone, without the one pass: the
    /// fuzzer holds the two to the same result on every line.
    @_spi(Fuzzing) public static func decodeWithFullReader(_ line: UnsafeRawBufferPointer) -> Outcome {
        var uncached = KeyPathCache()
        return outcome(of: decodeForEngine(line, keyPaths: &uncached, scanning: false))
    }

    private static func outcome(of decoded: EngineOutcome) -> Outcome {
        switch decoded {
        case .set(let id, let object, let keyPath, let value):
            return .request(Request(id: id?.value, operation: .set(object: object, keyPath: keyPath, value: value)))
        case .outcome(let outcome):
            return outcome
        }
    }

    /// What ``Engine`` acts on: ``Outcome``, with the most common request, a
    /// `set` without a condition or a lifetime, apart and unwrapped (building
    /// and taking apart a ``Request`` for it cost a tenth of a set).
    enum EngineOutcome {
        case set(id: RequestID?, object: String, keyPath: ObservedPath, value: JSONValue)
        case outcome(Outcome)
    }

    /// `scanning` false reads with the full reader alone (tests hold the one pass to it).
    static func decodeForEngine(_ line: UnsafeRawBufferPointer, keyPaths: inout KeyPathCache,
                                scanning: Bool = true) -> EngineOutcome {
        // One pass reads the request, whatever its spelling; the full reader
        // handles what it gives up on and explains what is wrong with a bad line.
        var fields = Fields()
        switch scanning ? RequestScanner.scan(line, into: &fields) as RequestScanner.Scan : .needsFullReader {
        case .plainSet(let set):
            return plainSet(set, keyPaths: &keyPaths)
        case .fields:
            break
        case .needsFullReader:
            fields = Fields()
            if let error = readFields(line, into: &fields) {
                return .outcome(.failure(id: fields.id, error: KVOEngineError(.badJSON, error.message)))
            }
        }
        do throws(KVOEngineError) {
            if fields.opCode == .set, !fields.hasChangeModifiers {
                let (object, keyPath, value) = try fields.takeSetOperands(keyPaths: &keyPaths)
                if let refusal = DocumentDepth.refusal(object, keyPath, value) { throw refusal }
                return .set(id: fields.id.map(RequestID.value), object: object, keyPath: keyPath, value: value)
            }
            let operation = try fields.operation()
            if let refusal = DocumentDepth.refusal(operation) ?? ComputedKeyPath.refusal(operation) { throw refusal }
            return .outcome(.request(Request(id: fields.id, operation: operation,
                                             condition: try fields.writeCondition(),
                                             lifetime: try fields.valueLifetime(),
                                             awaiting: try fields.changeAwait())))
        } catch {
            return .outcome(.failure(id: fields.id, error: error))
        }
    }

    /// A plain set's operands, checked as ``Fields/takeSetOperands(keyPaths:)``
    /// checks them, in the same order; its key path found in the cache by its bytes.
    private static func plainSet(_ set: RequestScanner.PlainSet, keyPaths: inout KeyPathCache) -> EngineOutcome {
        do throws(KVOEngineError) {
            let object = try Fields.objectName(.string(RequestScanner.string(set.object)))
            let path: ObservedPath
            switch set.keyPath {
            case nil: path = .wholeDocument
            case .plain(let bytes)?: path = try keyPaths.path(forBytes: bytes)
            case .decoded(let text)?: path = try keyPaths.path(for: text)
            }
            try Fields.checkWholeDocument(set.value, at: path)
            if let refusal = DocumentDepth.refusal(object, path, set.value) { throw refusal }
            return .set(id: set.id, object: object, keyPath: path, value: set.value)
        } catch {
            return .outcome(.failure(id: set.id?.value, error: error))
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
