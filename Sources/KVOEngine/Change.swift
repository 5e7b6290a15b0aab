/// The four kinds of change KVO knows (`NSKeyValueChange`).
public enum ChangeKind: String, Sendable {
    case setting
    case insertion
    case removal
    case replacement
}

/// One change to one object, described before it is applied so that prior
/// events can be sent, and complete enough that every observer's event can be
/// derived from it without looking at the store again (except for observers
/// of an ancestor path, whose values the shared controller reads itself).
///
/// A class, not a struct: it travels from the engine through the shared
/// controller's pending state to the encoder, and copying its six references
/// at each step cost more than the one allocation.
final class Change {
    /// The object that changes.
    let object: String
    /// Where it changes; empty when the whole object is deleted.
    let path: [String]
    let kind: ChangeKind
    /// The array positions touched, for the collection kinds.
    let indexes: [Int]
    /// For `setting`: the value at `path` before and after (nil: absent).
    /// For the collection kinds: the removed/replaced elements (`old`) and the
    /// inserted/replacing elements (`new`), each as an array.
    let old: JSONValue?
    let new: JSONValue?
    /// The daemon-wide sequence number of this change.
    let seq: UInt64

    init(object: String, path: [String], kind: ChangeKind, indexes: [Int], old: JSONValue?, new: JSONValue?,
         seq: UInt64) {
        self.object = object
        self.path = path
        self.kind = kind
        self.indexes = indexes
        self.old = old
        self.new = new
        self.seq = seq
    }
}
