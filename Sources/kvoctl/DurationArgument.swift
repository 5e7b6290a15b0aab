import ArgumentParser

/// A length of time on the command line: a number with a unit, `200ms`,
/// `5s`, `1.5m`, `1h`, or a bare number of seconds (`0.2`), as `--timeout`
/// has always taken it.
struct DurationArgument: ExpressibleByArgument, Sendable, CustomStringConvertible {
    /// Whole milliseconds (a finer figure is rounded up).
    let milliseconds: Int64
    /// As given, for messages (`5s`, `0.2`).
    let text: String

    private static let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]

    init?(argument: String) {
        let unit = Self.units.first { argument.hasSuffix($0.suffix) }
        let number = unit.map { String(argument.dropLast($0.suffix.count)) } ?? argument
        // Digits and a point only: no sign, exponent, inf or nan, which Double would take.
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value <= 1e9
        else { return nil }
        milliseconds = Int64((value * (unit?.seconds ?? 1) * 1000).rounded(.up))
        text = argument
    }

    var duration: Duration { .milliseconds(milliseconds) }

    /// Refuses a duration outside 1 ms…`maximum` ms: "`option` must be from 1ms to `upper`, not …".
    func check(_ option: String, upTo maximum: Int64, _ upper: String) throws(ValidationError) {
        guard (1...maximum).contains(milliseconds) else {
            throw ValidationError("\(option) must be from 1ms to \(upper), not \(text)")
        }
    }

    var description: String { text }

    /// For messages: `0.2 s` for a bare number, else as given (`5s`).
    var spoken: String { text.last?.isNumber == true ? text + " s" : text }
}
