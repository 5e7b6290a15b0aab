/// Pieces of reply and event lines that the daemon's hot paths append as
/// literals, each one copy with no `String` made: the names of ``Field``,
/// ``EventType``, ``EventKind`` and ``EventCause`` put together as the wire
/// puts them. `@inlinable` so each is a constant where it is used;
/// KVOProtocolTests checks every piece against the names it is made of.
public enum LineFragment {
    // Replies.

    /// `"id":`, a reply's first member when its request had an id.
    @inlinable public static var idMember: StaticString { #""id":"# }
    /// `{"id":`, a reply that starts with its request's id.
    @inlinable public static var idStart: StaticString { #"{"id":"# }
    /// `"ok":true`, a success.
    @inlinable public static var okTrue: StaticString { #""ok":true"# }
    /// `{"ok":true`, a success reply without an id, up to its fields.
    @inlinable public static var okTrueStart: StaticString { #"{"ok":true"# }
    /// `{"ok":true,"seq":`, a change's reply without an id, up to its seq.
    @inlinable public static var okTrueSeqStart: StaticString { #"{"ok":true,"seq":"# }
    /// `,"ok":true`, a success reply after its id, up to its fields.
    @inlinable public static var okTrueAfterID: StaticString { #","ok":true"# }
    /// `"ok":false,"error":{"code":`, a failure up to its code.
    @inlinable public static var failureCode: StaticString { #""ok":false,"error":{"code":"# }
    /// `,"message":`, an error's text.
    @inlinable public static var messageMember: StaticString { #","message":"# }
    /// `,"epoch":`, after the seq of `observe`'s reply.
    @inlinable public static var epochMember: StaticString { #","epoch":"# }

    // Events.

    /// `{"event":"change","object":`, the start of every change event.
    @inlinable public static var changeEventStart: StaticString { #"{"event":"change","object":"# }
    /// `{"o":`, the start of every compact event, before its observation's number.
    @inlinable public static var compactEventStart: StaticString { #"{"o":"# }
    /// `,"object":`, the changed object in a compact event of a prefix observation.
    @inlinable public static var objectMember: StaticString { #","object":"# }
    /// `,"prefix":`, a prefix observation's prefix.
    @inlinable public static var prefixMember: StaticString { #","prefix":"# }
    /// `,"keyPath":`, the observed key path.
    @inlinable public static var keyPathMember: StaticString { #","keyPath":"# }
    /// `,"kind":"setting","new":`, the usual event up to its new value.
    @inlinable public static var settingWithNew: StaticString { #","kind":"setting","new":"# }
    /// `,"kind":"setting"`.
    @inlinable public static var kindSetting: StaticString { #","kind":"setting""# }
    /// `,"kind":"insertion"`.
    @inlinable public static var kindInsertion: StaticString { #","kind":"insertion""# }
    /// `,"kind":"removal"`.
    @inlinable public static var kindRemoval: StaticString { #","kind":"removal""# }
    /// `,"kind":"replacement"`.
    @inlinable public static var kindReplacement: StaticString { #","kind":"replacement""# }
    /// `,"prior":true`.
    @inlinable public static var priorTrue: StaticString { #","prior":true"# }
    /// `,"initial":true`.
    @inlinable public static var initialTrue: StaticString { #","initial":true"# }
    /// `,"new":`.
    @inlinable public static var newMember: StaticString { #","new":"# }
    /// `,"old":`.
    @inlinable public static var oldMember: StaticString { #","old":"# }
    /// `,"indexes":[`, up to the first index.
    @inlinable public static var indexesStart: StaticString { #","indexes":["# }
    /// `,"changedKeyPath":`.
    @inlinable public static var changedKeyPathMember: StaticString { #","changedKeyPath":"# }
    /// `,"cause":"disconnect"`.
    @inlinable public static var causeDisconnect: StaticString { #","cause":"disconnect""# }
    /// `,"cause":"ttl"`.
    @inlinable public static var causeTTL: StaticString { #","cause":"ttl""# }
    /// `,"resync":true`.
    @inlinable public static var resyncTrue: StaticString { #","resync":true"# }
    /// `,"context":`, an observation's context, in its events and its `observations` entry.
    @inlinable public static var contextMember: StaticString { #","context":"# }
    /// `,"coalesced":`, before the count of the events one stands for.
    @inlinable public static var coalescedMember: StaticString { #","coalesced":"# }
    /// `,"seq":`, the last member of every event.
    @inlinable public static var seqMember: StaticString { #","seq":"# }
}
