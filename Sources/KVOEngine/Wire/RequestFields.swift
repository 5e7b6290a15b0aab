import KVOProtocol
import KVOValues

/// The members of a request object as read, before they are checked.
struct Fields {
    var id: RequestID?
    /// The op, when it is a string naming one; else `op` keeps what was sent.
    var opCode: Op?
    var object: JSONValue?
    var keyPath: JSONValue?
    /// `keyPath` as the scanner found it, a plain string's bytes in the line
    /// (valid while the line is): a set's path is found in the cache by them
    /// without a `String`; any other op reads it as `keyPath`.
    var keyPathText: UnsafeRawBufferPointer?
    var value: JSONValue?
    /// `options` already checked and parsed, by the fast path.
    var parsedOptions: ObservationOptions?
    /// A bit per ``RequestMember`` read so far (by either reader).
    var seen: UInt64 = 0
    /// The members a `set` never has, boxed: creating and destroying a dozen
    /// optional values for every request cost more than a box for the few
    /// requests that have them.
    private var rare: RareMembers?

    private final class RareMembers {
        /// One slot per ``RequestMember`` case (a new case needs one more here).
        var slots = InlineArray<33, JSONValue?>(repeating: nil)
        /// Names that are no member, kept only to refuse them repeated.
        var unknownNames: [String] = []
    }

    /// The box, made on first use (a `Fields` is never copied while it is filled).
    private var rareMembers: RareMembers {
        mutating get {
            if let rare { return rare }
            let made = RareMembers()
            rare = made
            return made
        }
    }

    /// A member's value as read, for every member but the four kept above.
    subscript(member: RequestMember) -> JSONValue? {
        get { rare?.slots[member.rawValue] }
        set { rareMembers.slots[member.rawValue] = newValue }
    }

    /// The first member named that is no member.
    var unknown: String? { rare?.unknownNames.first }

    /// Whether the request carries `ifModSeq` or `ifValue`.
    var hasWriteCondition: Bool { self[.ifModSeq] != nil || self[.ifValue] != nil }

    /// Reads one member's value, refusing a name that repeats (which would
    /// make a request ambiguous) as the reader's own check would.
    mutating func read(_ name: JSONText, at nameOffset: Int, from reader: inout JSONReader) throws(JSONError) {
        guard let member = RequestMember(name) else {
            let text = name.string
            if rareMembers.unknownNames.contains(text) { throw .duplicateMember(text, at: nameOffset) }
            rareMembers.unknownNames.append(text)
            try reader.skipValue()
            return
        }
        let bit = UInt64(1) << member.rawValue
        guard seen & bit == 0 else { throw .duplicateMember(member.name, at: nameOffset) }
        seen |= bit
        if member == .op, reader.peekKind() == .string {
            let text = try reader.readStringText()
            opCode = Op(text)
            if opCode == nil { self[.op] = .string(text.string) }
            return
        }
        assign(member, try reader.readValue())
    }

    /// Keeps a member's value as read: the one place, for both readers
    /// (``RequestScanner`` and ``read(_:at:from:)``), that says where each member goes.
    @inline(__always)
    mutating func assign(_ member: RequestMember, _ value: JSONValue) {
        switch member {
        case .id: id = RequestID(value)
        case .object: object = value
        case .keyPath: keyPath = value
        case .value: self.value = value
        default: self[member] = value
        }
    }

    /// A `set`'s object, key path (found in `keyPaths`) and value, checked.
    /// The value is moved out, not copied (`fields` is done with after this).
    private mutating func takeSetOperands(keyPaths: inout KeyPathCache) throws(KVOEngineError) -> (String, ObservedPath, JSONValue) {
        let name = try Self.objectName(object.take())
        let path: ObservedPath
        if let keyPathText {
            path = try keyPaths.path(forBytes: keyPathText)
        } else {
            switch keyPath.take() {
            case nil: path = .wholeDocument
            case .string(let text)?: path = try keyPaths.path(for: text)
            case _?: throw .badRequest("field \"keyPath\" must be a string")
            }
        }
        guard let value = value.take() else { throw .badRequest("missing field \"value\"") }
        try Self.checkWholeDocument(value, at: path)
        if let refusal = DocumentDepth.refusal(name, path, value) { throw refusal }
        return (name, path, value)
    }

    /// A set of the whole document must set an object: told from the request
    /// alone, before anyone's rights or the store are looked at.
    private static func checkWholeDocument(_ value: JSONValue, at path: ObservedPath) throws(KVOEngineError) {
        if path.isWholeDocument {
            guard case .object = value else {
                throw KVOEngineError(.notAnObject, "a whole document must be a JSON object, not \(value.typeName)")
            }
        }
    }

    /// The checks every op shares, from its row: no unknown member, none of
    /// ``FieldSet/refusedWhereNotTaken`` that the op does not take, `epoch` only with `since`.
    private func checkMembers(of spec: OpSpec) throws(KVOEngineError) {
        if let unknown { throw .badRequest("unknown field \"\(unknown)\" for op \"\(spec.op.rawValue)\"") }
        let refused = FieldSet(bits: seen & FieldSet.refusable.bits & ~spec.members.bits)
        if !refused.isEmpty, let member = FieldSet.refusedWhereNotTaken.first(where: refused.contains) {
            throw .badRequest("unknown field \"\(member.name)\" for op \"\(spec.op.rawValue)\"")
        }
        if self[.epoch] != nil, self[.since] == nil { throw .badRequest("field \"epoch\" is only for observe with \"since\"") }
    }

    /// The operation these fields ask for, checked; a `set`'s key path is
    /// found in `keyPaths` and its value moved out.
    mutating func takeOperation(keyPaths: inout KeyPathCache) throws(KVOEngineError) -> Operation {
        guard let opCode else {
            guard let op = self[.op] else { throw .badRequest("missing field \"op\"") }
            guard case .string(let name) = op else { throw .badRequest("field \"op\" must be a string") }
            throw KVOEngineError(.unknownOp, "unknown op \"\(name)\"")
        }
        // Every member checked there is a rare one.
        if hasRareMembers { try checkMembers(of: opCode.spec) }
        if opCode != .set, opCode != .observe, let text = keyPathText.take() {
            keyPath = .string(RequestScanner.string(text))
        }
        switch opCode {
        case .set:
            let (object, keyPath, value) = try takeSetOperands(keyPaths: &keyPaths)
            return .set(object: object, keyPath: keyPath, value: value)
        case .get:
            return .get(object: try objectName(), keyPath: try optionalKeyPath())
        case .delete:
            return .delete(object: try objectName(), keyPath: try optionalKeyPath())
        case .insert:
            let index = try self[.index].map { v throws(KVOEngineError) in try Self.integer(v, "index") }
            return .insert(object: try objectName(), keyPath: try requiredKeyPath(), index: index,
                           values: try valueOrValues())
        case .remove:
            let positions = try indexOrIndexes()
            return .remove(object: try objectName(), keyPath: try requiredKeyPath(),
                           indexes: try Self.ascendingOrder(of: positions).map { positions[$0] })
        case .replace:
            let positions = try indexOrIndexes()
            let order = try Self.ascendingOrder(of: positions)
            let replacements = try valueOrValues()
            guard positions.count == replacements.count else {
                throw .badRequest("replace needs as many values (\(replacements.count)) as indexes (\(positions.count))")
            }
            // Ascending indexes, each value kept with the index it was given for.
            return .replace(object: try objectName(), keyPath: try requiredKeyPath(),
                            indexes: order.map { positions[$0] }, values: order.map { replacements[$0] })
        case .add:
            let (object, path) = (try objectName(), try requiredKeyPath())
            // A number at the end of the key path: only the path's length can pass the limit.
            if let refusal = DocumentDepth.refusal(object, path, 0) { throw refusal }
            return .add(object: object, keyPath: path, by: try addend())
        case .observe:
            // Neither keyPath nor keyPaths: the whole document.
            return .observe(scope: try scope(), keyPaths: try observedKeyPaths(cache: &keyPaths),
                            options: try observationOptions(), context: self[.context], since: try resumePoint(),
                            policy: try observationPolicy(), filter: try observationFilter(),
                            compact: try flag(.compact, " (true: compact events)"), update: try updateFlag())
        case .unobserve:
            return .unobserve(scope: try scope(), keyPaths: try keyPathList())
        case .batch:
            return .batch(try batchOperations())
        case .list:
            if object != nil { throw .badRequest("list takes \"prefix\", not \"object\"") }
            return .list(prefix: try prefixField() ?? "", after: try afterField(), limit: try limitField())
        case .unobserveAll: return .unobserveAll
        case .ping: return .ping
        case .info: return .info
        case .metrics: return .metrics
        case .observations: return .observations(after: try observationCursor(), limit: try limitField())
        case .ack: return .ack(seq: try acknowledgedSeq())
        case .backup: return .backup(offset: try backupOffset())
        }
    }

    // MARK: Field checks

    private func required(_ field: JSONValue?, _ name: String) throws(KVOEngineError) -> JSONValue {
        guard let field else { throw Self.missing(name) }
        return field
    }

    private static func missing(_ name: String) -> KVOEngineError { .badRequest("missing field \"\(name)\"") }

    /// Both `keyPath` and `keyPaths` given.
    private static let keyPathAndKeyPaths = KVOEngineError.badRequest("give \"keyPath\" or \"keyPaths\", not both")

    private func objectName() throws(KVOEngineError) -> String {
        try Self.objectName(object)
    }

    static func objectName(_ object: consuming JSONValue?) throws(KVOEngineError) -> String {
        // Taken, not borrowed: the name moves out of the value (no retain and release).
        switch consume object {
        case .string(let name)?:
            guard !name.isEmpty, name.utf8.count <= 1024 else {
                throw .badRequest("field \"object\" must be 1 to 1024 bytes long")
            }
            return name
        case nil: throw missing("object")
        case _?: throw .badRequest("field \"object\" must be a string")
        }
    }

    /// The most ops one `batch` may carry.
    static let maxBatchOps = 10_000

    /// Whether any member but the ones every set has was read. (Asked
    /// before calling a method that reads them: a call on a `Fields` being
    /// filled copies all of it.)
    var hasRareMembers: Bool { rare != nil }

    /// A change's condition, lifetime and await, checked; nil when it has none.
    func changeModifiers() throws(KVOEngineError) -> ChangeModifiers? {
        let (condition, lifetime, awaiting) = (try writeCondition(), try valueLifetime(), try changeAwait())
        guard condition != nil || lifetime != nil || self[.awaiting] != nil else { return nil }
        return ChangeModifiers(condition: condition, lifetime: lifetime, awaiting: awaiting)
    }

    /// `ifModSeq` and `ifValue`, checked; nil when neither is there.
    func writeCondition() throws(KVOEngineError) -> WriteCondition? {
        guard hasWriteCondition else { return nil }
        var condition = WriteCondition()
        condition.ifModSeq = try unsigned(.ifModSeq, "a modSeq")
        condition.ifValue = self[.ifValue]
        return condition
    }

    /// `ephemeral` and `ttl`, checked; nil when neither is there (or `ephemeral` is false without `ttl`).
    func valueLifetime() throws(KVOEngineError) -> ValueLifetime? {
        guard self[.ephemeral] != nil || self[.ttl] != nil else { return nil }
        var lifetime = ValueLifetime()
        lifetime.ephemeral = try flag(.ephemeral)
        if let ttl = self[.ttl] {
            guard case .number(let number) = ttl, let seconds = number.doubleValue, seconds > 0,
                  seconds <= ValueLifetime.maxTTL else {
                throw .badRequest("field \"ttl\" must be a number of seconds over 0 and at most \(Int(ValueLifetime.maxTTL))")
            }
            lifetime.ttl = seconds
        }
        return lifetime.ephemeral || lifetime.ttl != nil ? lifetime : nil
    }

    /// `ops`: change requests, each read as a request line of its own would
    /// be (without an `id`); an error names the op's position.
    private func batchOperations() throws(KVOEngineError) -> [ChangeOperation] {
        guard case .array(let elements)? = self[.ops] else {
            throw .badRequest(self[.ops] == nil ? "missing field \"ops\"" : "field \"ops\" must be an array of change requests")
        }
        guard !elements.isEmpty else { throw .badRequest("field \"ops\" must not be empty") }
        guard elements.count <= Self.maxBatchOps else {
            throw KVOEngineError(.limitExceeded, "a batch may carry \(Self.maxBatchOps) ops, not \(elements.count)",
                                 details: KVOEngineError.batchIndex(Self.maxBatchOps))
        }
        var operations: [ChangeOperation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let fail = { (error: KVOEngineError) -> KVOEngineError in
                var details = error.details
                details[.index] = .number(JSONNumber(index))
                return KVOEngineError(error.code, "ops[\(index)]: \(error.message)", details: details)
            }
            guard case .object(let members) = element else {
                throw fail(.badRequest("must be a change request (an object)"))
            }
            if members["id"] != nil { throw fail(.badRequest("an op of a batch has no \"id\" (the batch has)")) }
            switch RequestDecoder.decode(element.jsonBytes) {
            case .failure(_, let error):
                throw fail(error)
            case .request(let request):
                if request.awaiting != nil {
                    throw fail(.badRequest("\"await\" goes on the batch, not on its ops"))
                }
                guard request.operation.spec.batchable else {
                    throw fail(.badRequest("a batch carries set, delete, insert, remove, replace and add only"))
                }
                operations.append(ChangeOperation(operation: request.operation, condition: request.condition,
                                                  lifetime: request.lifetime))
            }
        }
        return operations
    }

    /// The longest prefix, in UTF-8 bytes (as an object name).
    static let maxPrefixBytes = 1024
    /// `list`'s page size when none is asked for, and the most that may be.
    static let defaultListLimit = 1000
    static let maxListLimit = 10_000

    /// `object` or `prefix`, exactly one.
    private func scope() throws(KVOEngineError) -> ObservationScope {
        switch (object, self[.prefix]) {
        case (nil, nil): throw .badRequest("missing field \"object\" or \"prefix\"")
        case (_?, nil): return .object(try objectName())
        case (nil, _?): return .prefix(try prefixField()!)
        case (_?, _?): throw .badRequest("give \"object\" or \"prefix\", not both")
        }
    }

    private func prefixField() throws(KVOEngineError) -> String? {
        guard let prefix = self[.prefix] else { return nil }
        guard case .string(let text) = prefix else { throw .badRequest("field \"prefix\" must be a string") }
        guard text.utf8.count <= Self.maxPrefixBytes else {
            throw KVOEngineError(.limitExceeded, "field \"prefix\" is longer than \(Self.maxPrefixBytes) bytes")
        }
        return text
    }

    private func afterField() throws(KVOEngineError) -> String? {
        guard let after = self[.after] else { return nil }
        guard case .string(let text) = after else { throw .badRequest("field \"after\" must be a string") }
        return text
    }

    /// An `observations` request's `after`: the `next` of an earlier reply, a
    /// string of decimal digits (an observation's serial), kept opaque to clients.
    private func observationCursor() throws(KVOEngineError) -> UInt64? {
        guard let after = self[.after] else { return nil }
        guard case .string(let text) = after, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let serial = UInt64(text) else {
            throw .badRequest("field \"after\" must be the \"next\" of an earlier observations reply")
        }
        return serial
    }

    /// A `backup`'s `offset`: a byte position in the connection's snapshot.
    private func backupOffset() throws(KVOEngineError) -> UInt64? {
        try unsigned(.offset, "a byte position in the backup")
    }

    private func limitField() throws(KVOEngineError) -> Int {
        guard let limit = self[.limit] else { return Self.defaultListLimit }
        guard case .number(let number) = limit, let count = number.intValue, count > 0 else {
            throw .badRequest("field \"limit\" must be a positive integer")
        }
        guard count <= Self.maxListLimit else {
            throw KVOEngineError(.limitExceeded, "field \"limit\" is over \(Self.maxListLimit)")
        }
        return count
    }

    private func requiredKeyPath() throws(KVOEngineError) -> ObservedPath {
        try Self.keyPath(try required(keyPath, "keyPath"), "keyPath")
    }

    private func optionalKeyPath() throws(KVOEngineError) -> ObservedPath? {
        guard let keyPath else { return nil }
        return try Self.keyPath(keyPath, "keyPath")
    }

    /// An observe's key paths: one written as plain text is found in `cache`
    /// as a set's is (no `String`, no parse on a hit); neither field, the whole document.
    private mutating func observedKeyPaths(cache: inout KeyPathCache) throws(KVOEngineError) -> [ObservedPath] {
        if let text = keyPathText.take() {
            guard self[.keyPaths] == nil else { throw Self.keyPathAndKeyPaths }
            return [try cache.path(forBytes: text, writing: false)]
        }
        return try keyPathList() ?? [.wholeDocument]
    }

    /// `keyPath` or `keyPaths`, not both; nil when neither is given.
    private func keyPathList() throws(KVOEngineError) -> [ObservedPath]? {
        switch (keyPath, self[.keyPaths]) {
        case (nil, nil): return nil
        case (.some(let one), nil): return [try Self.keyPath(one, "keyPath")]
        case (nil, .some(.array(let many))):
            guard !many.isEmpty else { throw .badRequest("field \"keyPaths\" must not be empty") }
            guard many.count <= RequestDecoder.maxListCount else {
                throw KVOEngineError(.limitExceeded, "more than \(RequestDecoder.maxListCount) keyPaths")
            }
            var paths: [ObservedPath] = []
            for (position, element) in many.enumerated() {
                guard case .string(let text) = element else {
                    throw .badRequest("field \"keyPaths[\(position)]\" must be a string")
                }
                do throws(KVOEngineError) {
                    paths.append(try ObservedPath(parsing: text))
                } catch {
                    throw KVOEngineError(error.code, "field \"keyPaths[\(position)]\": \(error.message)")
                }
            }
            return paths
        case (nil, .some): throw .badRequest("field \"keyPaths\" must be an array of strings")
        default: throw Self.keyPathAndKeyPaths
        }
    }

    private func valueOrValues() throws(KVOEngineError) -> [JSONValue] {
        switch (value, self[.values]) {
        case (.some(let one), nil): return [one]
        case (nil, .some(.array(let many))):
            guard !many.isEmpty else { throw .badRequest("field \"values\" must not be empty") }
            return many
        case (nil, .some): throw .badRequest("field \"values\" must be an array")
        case (nil, nil): throw .badRequest("missing field \"value\" or \"values\"")
        default: throw .badRequest("give \"value\" or \"values\", not both")
        }
    }

    /// `index` or `indexes`, in the order given (``ascendingOrder(of:)`` refuses duplicates).
    private func indexOrIndexes() throws(KVOEngineError) -> [Int] {
        switch (self[.index], self[.indexes]) {
        case (.some(let one), nil): return [try Self.integer(one, "index")]
        case (nil, .some(.array(let many))):
            guard !many.isEmpty else { throw .badRequest("field \"indexes\" must not be empty") }
            guard many.count <= RequestDecoder.maxListCount else {
                throw KVOEngineError(.limitExceeded, "more than \(RequestDecoder.maxListCount) indexes")
            }
            var positions: [Int] = []
            positions.reserveCapacity(many.count)
            for (position, element) in many.enumerated() {
                guard case .number(let number) = element, let integer = number.intValue, integer >= 0 else {
                    throw .badRequest("field \"indexes[\(position)]\" must be a non-negative integer")
                }
                positions.append(integer)
            }
            return positions
        case (nil, .some): throw .badRequest("field \"indexes\" must be an array of integers")
        case (nil, nil): throw .badRequest("missing field \"index\" or \"indexes\"")
        default: throw .badRequest("give \"index\" or \"indexes\", not both")
        }
    }

    /// The positions of `indexes` in ascending order of index, found with one
    /// sort (none when they come ascending, as most clients send them);
    /// a repeated index is `bad_request`.
    private static func ascendingOrder(of indexes: [Int]) throws(KVOEngineError) -> [Int] {
        let isAscending = zip(indexes, indexes.dropFirst()).allSatisfy { $0 < $1 }
        let order = isAscending ? Array(indexes.indices) : indexes.indices.sorted { indexes[$0] < indexes[$1] }
        for (previous, next) in zip(order, order.dropFirst()) where indexes[previous] == indexes[next] {
            throw .badRequest("field \"indexes\" repeats \(indexes[next])")
        }
        return order
    }

    private func observationOptions() throws(KVOEngineError) -> ObservationOptions {
        if let parsedOptions { return parsedOptions }
        guard let options = self[.options] else { return [] }
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

    /// A boolean member (`compact`, `update`, `distinct`, `ack`, `ephemeral`):
    /// false when it is not there; `meaning` tells what true asks for.
    @inline(__always)
    func flag(_ member: RequestMember, _ meaning: String = "") throws(KVOEngineError) -> Bool {
        switch self[member] {
        case nil: return false
        case .bool(let flag)?: return flag
        default: throw .badRequest("field \"\(member.name)\" must be a boolean\(meaning)")
        }
    }

    /// `update`: whether an observation already there takes the request's
    /// options. Not with `since`: a replay is for a new observation.
    private func updateFlag() throws(KVOEngineError) -> Bool {
        let update = try flag(.update, " (true: an observation already there takes these options)")
        if update, self[.since] != nil { throw .badRequest("\"update\" and \"since\" do not go together: update changes the options of observations that have been delivering all along") }
        return update
    }

    /// `distinct` (a boolean), `kinds` (a non-empty list of kind names) and
    /// `throttle` (milliseconds, 1 to ``ThrottleLimit/milliseconds``).
    private func observationFilter() throws(KVOEngineError) -> ObservationFilter {
        let distinctFlag = try flag(.distinct)
        let interval = try milliseconds(.throttle, upTo: ThrottleLimit.milliseconds, "throttle")
        let acknowledges = try flag(.ack)
        guard let kinds = self[.kinds] else {
            return ObservationFilter(distinct: distinctFlag, throttle: interval, acknowledges: acknowledges)
        }
        let names = "\"setting\", \"insertion\", \"removal\", \"replacement\""
        guard case .array(let elements) = kinds, !elements.isEmpty else {
            throw .badRequest("field \"kinds\" must be a non-empty array of \(names)")
        }
        var chosen: [ChangeKind] = []
        for (position, element) in elements.enumerated() {
            guard case .string(let name) = element, let kind = ChangeKind(rawValue: name) else {
                throw .badRequest("field \"kinds[\(position)]\" must be one of \(names)")
            }
            chosen.append(kind)
        }
        return ObservationFilter(distinct: distinctFlag, kinds: chosen, throttle: interval, acknowledges: acknowledges)
    }

    /// A non-negative integer member, nil when it is not there; `meaning`
    /// says, in the error, what it counts.
    @inline(__always)
    func unsigned(_ member: RequestMember, _ meaning: String) throws(KVOEngineError) -> UInt64? {
        guard let value = self[member] else { return nil }
        guard case .number(let number) = value, let integer = UInt64(number.literal) else {
            throw .badRequest("field \"\(member.name)\" must be a non-negative integer (\(meaning))")
        }
        return integer
    }

    /// A whole number of milliseconds from 1 to `limit` (`throttle`,
    /// `awaitTimeout`), nil when the member is not there.
    @inline(__always)
    func milliseconds(_ member: RequestMember, upTo limit: UInt32, _ limitName: String) throws(KVOEngineError) -> UInt32? {
        guard let value = self[member] else { return nil }
        guard case .number(let number) = value, let milliseconds = number.intValue, milliseconds >= 1,
              milliseconds <= Int(limit) else {
            throw .badRequest("field \"\(member.name)\" must be an integer of milliseconds from 1 to \(limit) (the \(limitName) limit)")
        }
        return UInt32(milliseconds)
    }

    private func observationPolicy() throws(KVOEngineError) -> ObservationPolicy {
        guard let policy = self[.policy] else { return .default }
        guard case .string(let name) = policy, let known = ObservationPolicy(rawValue: name) else {
            throw .badRequest("field \"policy\" must be \"coalesce\" or \"disconnect\"")
        }
        return known
    }

    private func resumePoint() throws(KVOEngineError) -> ResumePoint? {
        guard let seq = try unsigned(.since, "a seq") else { return nil }
        switch self[.epoch] {
        case nil: return ResumePoint(seq: seq)
        case .string(let epoch)?: return ResumePoint(seq: seq, epoch: epoch)
        default: throw .badRequest("field \"epoch\" must be a string")
        }
    }

    private static func keyPath(_ value: JSONValue, _ field: String) throws(KVOEngineError) -> ObservedPath {
        guard case .string(let text) = value else { throw .badRequest("field \"\(field)\" must be a string") }
        return try ObservedPath(parsing: text)
    }

    /// An add's `by`: an integer ``AddedInteger`` takes.
    private func addend() throws(KVOEngineError) -> Int {
        guard case .number(let number) = try required(self[.by], "by"), case .integer(let amount) = AddedInteger(number) else {
            throw .badRequest("field \"by\" must be an integer from -\(AddedInteger.limit) to \(AddedInteger.limit) "
                + "(±2^53), written without fraction or exponent")
        }
        return amount
    }

    private static func integer(_ value: JSONValue, _ field: String) throws(KVOEngineError) -> Int {
        guard case .number(let number) = value, let integer = number.intValue, integer >= 0 else {
            throw .badRequest("field \"\(field)\" must hold non-negative integers")
        }
        return integer
    }
}
