import KVOProtocol
import KVOValues

/// One op's row: what every check of a request reads about its op, so that a
/// new op is one row and one handler (xenstored's `wire_funcs`, Redis's
/// command table). The rows are ``table``, built by ``init(_:)``, whose
/// exhaustive switch over ``Op`` makes the compiler ask a new op for its row.
struct OpSpec: Sendable {
    /// What the op needs of the access policy (docs/ACCESS.md).
    enum Access: Sendable {
        /// Nothing of any object: it touches only the client's own
        /// observations or the daemon's figures (a prefix's observations and
        /// `list` leave out what the client may not read).
        case none
        /// Reading its object (`observe` only of one object).
        case read
        /// Writing its object.
        case write
        /// Both: its reply tells what it wrote (`add`'s sum), as a condition reads the value.
        case readAndWrite
        /// Each of its ops' own, checked op by op (`batch`).
        case eachOp
        /// The right to take a backup, on no one object.
        case backup
    }

    /// Which depth check (``DocumentDepth``) the op's request passes.
    enum DepthCheck: Sendable {
        case none
        /// Its value at its key path, checked as the decoder takes them (`set`,
        /// whose value is moved, not copied): with that, its key path too.
        case value
        /// Its key path alone, checked as the decoder takes it: what it writes is a number (`add`).
        case keyPath
        /// Its elements, a level below its key path (`insert`, `replace`).
        case elements
    }

    /// What the op does at its key paths, for ``ComputedKeyPath``'s check.
    enum KeyPathUse: Sendable {
        /// Nothing checked (none named, or only to stop observing them).
        case none
        /// Read or observed: a malformed computed key path is refused.
        case read
        /// Written: a computed key path is refused.
        case write
    }

    let op: Op
    /// Whether it changes the store (and history, durability and observers see it).
    let changesState: Bool
    /// Whether over etcd it is proposed to the replicator rather than answered here.
    let replicated: Bool
    /// Whether it is one change of one object, which a `batch` may carry and
    /// a pipeline of changes may take over etcd.
    let batchable: Bool
    let access: Access
    let depth: DepthCheck
    let keyPathUse: KeyPathUse
    /// The members it takes beside `id` and `op`. Of the members in
    /// ``FieldSet/refusedWhereNotTaken``, an op refuses those it does not
    /// take; the others (`object`, `value`…) it ignores, as kvod always did.
    let members: FieldSet
    /// The members it cannot go without: one of each set (`value` or `values`).
    /// The decoder's takers say which is missing; `OpTableTests` holds them to these.
    let required: RequiredMembers

    /// The row of `op`, named once: the position of ``Op`` in ``table``.
    static let table: [OpSpec] = Op.allCases.map(OpSpec.init)

}
