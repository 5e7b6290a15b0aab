import KVOValues

/// Text from clients, made safe for a log line.
///
/// Object names and key paths are any strings: one holding a newline and a
/// plausible timestamp would otherwise forge a line of its own in the log.
public enum LogText {
    /// `name` in double quotes, with quotes, backslashes and control
    /// characters escaped as JSON escapes them (`"a\nb"`), so that where it
    /// starts and ends is unambiguous.
    public static func quoted(_ name: String) -> String {
        String(decoding: JSONValue.string(name).jsonBytes, as: UTF8.self)
    }

    /// `text` with every control character (C0, DEL, C1) written as an
    /// escape: `\n`, `\r`, `\t`, or `\u{1b}`; the last defence, applied to
    /// every message by kvod's log handler. Text without any is returned as
    /// it is.
    public static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where isControl(scalar): escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
