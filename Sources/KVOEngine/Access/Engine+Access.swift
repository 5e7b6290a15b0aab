/// The access check: one per request, before anything is read or changed,
/// so a forbidden request changes nothing and learns nothing (not even
/// whether the object exists).
extension Engine {
    /// Throws `forbidden` when the policy does not let `client` do `operation`
    /// (with `condition`: a condition reads the value, so it needs the right
    /// to read too). Without a policy everything is allowed.
    func authorize(_ operation: Operation, condition: WriteCondition? = nil,
                   for client: ClientController) throws(KVOEngineError) {
        guard let policy = configuration.accessPolicy else { return }
        switch operation.spec.access {
        case .none: return
        case .read, .write, .readAndWrite: break
        case .eachOp:
            guard case .batch(let operations) = operation else { return }
            // Refused whole when any op is, naming the first one.
            for (index, change) in operations.enumerated() {
                do throws(KVOEngineError) {
                    try authorize(change.operation, condition: change.condition, for: client)
                } catch {
                    throw KVOEngineError(error.code, "ops[\(index)]: \(error.message)",
                                         details: KVOEngineError.batchIndex(index))
                }
            }
            return
        case .backup:
            guard policy.mayBackUp(client.credentials) else {
                throw KVOEngineError(.forbidden, "\(Self.name(of: client)) may not take a backup: that takes root, "
                    + "kvod's own user or a grant of \"backup\" in --policy")
            }
            return
        }
        guard let (needed, object) = Self.rightsNeeded(by: operation) else { return }
        let rights = policy.rights(of: client.credentials, on: object)
        if !rights.isSuperset(of: needed) {
            let verb = needed == .write ? "write" : needed == .read ? "read or observe"
                : "both read and write (an add tells the sum it wrote)"
            throw KVOEngineError(.forbidden, "\(Self.name(of: client)) may not \(verb) \(object)")
        }
        if condition != nil, !rights.contains(.read) {
            throw KVOEngineError(.forbidden, "\(Self.name(of: client)) may not read \(object), so its changes there "
                + "take no ifModSeq or ifValue (a condition reads the value)")
        }
    }

    /// How a refusal names the client.
    static func name(of client: ClientController) -> String {
        client.credentials.map { "uid \($0.uid)" } ?? "a client of unknown uid"
    }

    /// What an operation needs, and on which object, as its row says; nil for
    /// those that need nothing of one object (a prefix's observations and
    /// `list` leave out what the client may not read; a batch's ops and
    /// `backup` are checked in ``authorize(_:condition:for:)``).
    static func rightsNeeded(by operation: Operation) -> (AccessPolicy.Rights, String)? {
        let needed: AccessPolicy.Rights
        switch operation.spec.access {
        case .read: needed = .read
        case .write: needed = .write
        case .readAndWrite: needed = .all
        case .none, .eachOp, .backup: return nil
        }
        return operation.operands.object.map { (needed, $0) }
    }

    /// Whether `client` may read every object: only then is it told figures
    /// that follow every value's size (`info`'s memory account, a memory
    /// refusal's numbers), which would tell the size of a value it may not read.
    func readsEverything(_ client: ClientController) -> Bool {
        configuration.accessPolicy?.readsEverything(client.credentials) ?? true
    }

    /// Whether `client` may read `object`: what a prefix observation and
    /// `list` ask of each name, so that nothing tells a client of an object
    /// it may not read.
    func mayRead(_ object: String, _ client: ClientController) -> Bool {
        configuration.accessPolicy?.allows(.read, on: object, for: client.credentials) ?? true
    }
}
