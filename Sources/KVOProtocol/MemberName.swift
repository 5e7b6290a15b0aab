/// A set of member names of kvod's JSON (``Field``, ``InfoFigure/Memory``…):
/// code outside KVOProtocol writes a member through one of these, never as a
/// string literal (a test in KVOProtocolTests holds it to that).
public protocol MemberName: RawRepresentable, Sendable where RawValue == String {}
