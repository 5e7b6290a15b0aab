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
struct Change {
    /// The object that changes.
    var object: String
    /// Where it changes; empty when the whole object is deleted.
    var path: [String]
    var kind: ChangeKind
    /// The array positions touched, for the collection kinds.
    var indexes: [Int]
    /// For `setting`: the value at `path` before and after (nil: absent).
    /// For the collection kinds: the removed/replaced elements (`old`) and the
    /// inserted/replacing elements (`new`), each as an array.
    var old: JSONValue?
    var new: JSONValue?
    /// The daemon-wide sequence number of this change.
    var seq: UInt64
}
