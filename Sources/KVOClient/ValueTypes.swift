import KVOProtocol
import KVOValues

// The value types that appear in KVOClient's API (KVOValues' and KVOProtocol's,
// shared with kvod), under these names, so that a program needs `import KVOClient` only.

/// A JSON value as kvod stores and sends it (numbers keep their literal text).
public typealias JSONValue = KVOValues.JSONValue
/// A JSON number, kept as its literal so large integers survive unchanged.
public typealias JSONNumber = KVOValues.JSONNumber
/// KVO's four kinds of change: setting, insertion, removal, replacement.
public typealias ChangeKind = KVOProtocol.EventKind
/// What an observation wants to hear: `.new`, `.old`, `.initial`, `.prior`.
public typealias ObservationOptions = KVOValues.ObservationOptions
/// Where an observation stopped: a seq and the epoch (the history) it counts
/// in; its text form is `EPOCH:SEQ`. Pass it as `since` to resume
/// (``KVOConnection/changes(of:keyPath:options:delivery:context:since:)``); take it from
/// ``Change/resumePoint`` or ``DaemonInfo/resumePoint``.
public typealias ResumePoint = KVOValues.ResumePoint
