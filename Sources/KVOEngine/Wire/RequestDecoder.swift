import KVOValues

/// Turns one line into a ``Request``, reading the bytes straight into its
/// fields (no intermediate dictionary, no Foundation: this is the hot path).
/// Every request of every op, whatever its spelling, takes the same one pass.
///
/// JSON that is malformed, not an object, nests too deep or repeats a member
/// is `bad_json`; a missing or mistyped field is `bad_request` and names the
/// field; an unknown `op` is `unknown_op`. Whatever fails, the `id` is kept
/// when it could be read, so the error reply still echoes it.
///
/// A decoder keeps the key paths that `set` requests named lately, parsed
/// (``KeyPathCache``): the daemon keeps one for all its connections and
/// decodes every line with it, then hands the ``Request`` to the ``Engine``.
public struct RequestDecoder {
    /// The request, or the error to reply with and the id to echo.
    public enum Outcome {
        case request(Request)
        case failure(id: RequestID?, error: KVOEngineError)
    }

    /// The deepest nesting a line may have.
    public static let maxDepth = 512
    /// The most key paths or indexes one request may name.
    public static let maxListCount = 10_000

    private var keyPaths = KeyPathCache()

    /// A decoder with no key path kept yet.
    public init() {}

    /// The request in `line` (one line, without its newline), or the error to reply with.
    public mutating func decode(_ line: UnsafeRawBufferPointer) -> Outcome {
        var fields = Fields()
        // Only a line that is no valid request fails the one pass: the full
        // reader then reads it again to say what is wrong with it.
        if !RequestScanner.scan(line, into: &fields) {
            fields = Fields()
            if let error = Self.readFields(line, into: &fields) {
                return .failure(id: fields.id, error: KVOEngineError(.badJSON, error.message))
            }
        }
        return request(from: &fields)
    }

    /// ``decode(_:)`` by a decoder of its own, which keeps nothing.
    public static func decode(_ line: UnsafeRawBufferPointer) -> Outcome {
        var decoder = RequestDecoder()
        return decoder.decode(line)
    }

    /// ``decode(_:)`` of a line held in an array.
    public static func decode(_ line: [UInt8]) -> Outcome {
        line.withUnsafeBytes { decode($0) }
    }

    /// ``decode(_:)`` by the full reader alone, without the one pass: the
    /// fuzzer holds the two to the same result on every line.
    @_spi(Fuzzing) public static func decodeWithFullReader(_ line: UnsafeRawBufferPointer) -> Outcome {
        var fields = Fields()
        if let error = readFields(line, into: &fields) {
            return .failure(id: fields.id, error: KVOEngineError(.badJSON, error.message))
        }
        var decoder = RequestDecoder()
        return decoder.request(from: &fields)
    }

    /// The request the fields make, checked; its parts are moved out of
    /// `fields`, and it is built once, in place (copying a `Request` cost a
    /// twentieth of a set).
    private mutating func request(from fields: inout Fields) -> Outcome {
        do throws(KVOEngineError) {
            let operation = try fields.takeOperation(keyPaths: &keyPaths)
            // A set's depth and key path are checked as its operands are taken.
            if let spec = fields.opCode?.spec, spec.depth != .value,
               let refusal = DocumentDepth.refusal(operation, spec) ?? ComputedKeyPath.refusal(operation, spec) {
                throw refusal
            }
            let modifiers = fields.hasRareMembers ? try fields.changeModifiers() : nil
            return .request(Request(id: fields.id.take(), operation: operation, modifiers: modifiers))
        } catch {
            return .failure(id: fields.id, error: error)
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
