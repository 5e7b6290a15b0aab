import KVOEngine

// The engine's value types that appear in KVOClient's API, under the same
// names, so that a program needs `import KVOClient` only.

/// A JSON value as kvod stores and sends it (numbers keep their literal text).
public typealias JSONValue = KVOEngine.JSONValue
/// A JSON number, kept as its literal so large integers survive unchanged.
public typealias JSONNumber = KVOEngine.JSONNumber
/// KVO's four kinds of change: setting, insertion, removal, replacement.
public typealias ChangeKind = KVOEngine.ChangeKind
/// What an observation wants to hear: `.new`, `.old`, `.initial`, `.prior`.
public typealias ObservationOptions = KVOEngine.ObservationOptions
/// Where an observation stopped: a seq and the epoch (the history) it counts
/// in; its text form is `EPOCH:SEQ`. Pass it as `since` to resume
/// (``KVOConnection/changes(of:keyPath:options:delivery:context:since:)``); take it from
/// ``Change/resumePoint`` or ``DaemonInfo/resumePoint``.
public typealias ResumePoint = KVOEngine.ResumePoint
