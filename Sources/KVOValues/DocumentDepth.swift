/// How deep a stored object may nest, and how deep every reader of kvod's
/// documents must be willing to go (docs/PROTOCOL.md, "Nesting").
///
/// An object is level 1; each object or array inside adds one. A value set
/// at a key path of N keys therefore lands N levels down, and a request with
/// a long key path could build an object deeper than any reader accepts: it
/// was acknowledged, then refused by the loader at the next start. So the
/// limit is checked when a request is accepted (the engine's `DocumentDepth+Refusal.swift`),
/// and every reader (the loader, the history, KVOClient, kvoctl) allows at least ``readerLimit``.
public enum DocumentDepth {
    /// The deepest nesting of a stored object, counting the object itself;
    /// the same number as a request line's limit (the engine's `RequestDecoder.maxDepth`).
    public static let limit = 512

    /// The depth a reader of kvod's lines and rows must accept: ``limit``
    /// plus what replies and events wrap around a value (`get`'s reply is one
    /// level, a collection event's `new` two, the `observations` reply three
    /// around a context), with room to spare.
    public static let readerLimit = limit + 8
}
