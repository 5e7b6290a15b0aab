import KVOProtocol

extension OpSpec {
    /// The table of ops, a row per op: exhaustive, so a new ``Op`` does not
    /// build until it says what it is.
    init(_ op: Op) {
        switch op {
        case .set:
            self.init(change: op, access: .write, depth: .value,
                      members: [.object, .keyPath, .value] + Self.lifetimeMembers,
                      required: [[.object], [.value]])
        case .delete:
            self.init(change: op, access: .write, depth: .none, members: [.object, .keyPath], required: [[.object]])
        case .insert:
            self.init(change: op, access: .write, depth: .elements,
                      members: [.object, .keyPath, .index, .value, .values],
                      required: [[.object], [.keyPath], [.value, .values]])
        case .remove:
            self.init(change: op, access: .write, depth: .none, members: [.object, .keyPath, .index, .indexes],
                      required: [[.object], [.keyPath], [.index, .indexes]])
        case .replace:
            self.init(change: op, access: .write, depth: .elements,
                      members: [.object, .keyPath, .index, .indexes, .value, .values],
                      required: [[.object], [.keyPath], [.index, .indexes], [.value, .values]])
        case .add:
            self.init(change: op, access: .readAndWrite, depth: .keyPath,
                      members: [.object, .keyPath, .by] + Self.lifetimeMembers,
                      required: [[.object], [.keyPath], [.by]])
        case .get:
            self.init(other: op, access: .read, keyPathUse: .read, members: [.object, .keyPath], required: [[.object]])
        case .observe:
            self.init(other: op, access: .read, keyPathUse: .read,
                      members: Self.scopeMembers + [.keyPath, .keyPaths, .options, .context, .since, .epoch, .policy,
                                                    .distinct, .kinds, .throttle, .ack, .compact, .update],
                      required: [Self.scopeMembers])
        case .unobserve:
            self.init(other: op, members: Self.scopeMembers + [.keyPath, .keyPaths], required: [Self.scopeMembers])
        case .list:
            self.init(other: op, members: [.prefix, .after, .limit])
        case .observations:
            self.init(other: op, members: [.after, .limit])
        case .batch:
            self.init(op: op, changesState: true, replicated: true, batchable: false, access: .eachOp, depth: .none,
                      keyPathUse: .none, members: [.ops, .awaiting, .awaitTimeout], required: [[.ops]])
        case .ack:
            self.init(other: op, members: [.seq], required: [[.seq]])
        case .backup:
            self.init(other: op, access: .backup, members: [.offset])
        case .unobserveAll, .ping, .info, .metrics:
            self.init(other: op)
        }
    }

    /// A single change of one object: replicated, batchable, its key path
    /// written; it takes a condition and `await`.
    private init(change op: Op, access: Access, depth: DepthCheck, members: FieldSet, required: RequiredMembers) {
        self.init(op: op, changesState: true, replicated: true, batchable: true, access: access, depth: depth,
                  keyPathUse: .write, members: members + Self.changeMembers, required: required)
    }

    /// An op that changes nothing.
    private init(other op: Op, access: Access = .none, keyPathUse: KeyPathUse = .none, members: FieldSet = [],
                 required: RequiredMembers = []) {
        self.init(op: op, changesState: false, replicated: false, batchable: false, access: access, depth: .none,
                  keyPathUse: keyPathUse, members: members, required: required)
    }

    /// The conditions (`ifModSeq`, `ifValue`) and `await` every single change takes.
    private static let changeMembers: FieldSet = [.ifModSeq, .ifValue, .awaiting, .awaitTimeout]
    /// A value's lifetime: `ephemeral`, `ttl`.
    private static let lifetimeMembers: FieldSet = [.ephemeral, .ttl]
    /// One object, or every object under a prefix.
    private static let scopeMembers: FieldSet = [.object, .prefix]
}
