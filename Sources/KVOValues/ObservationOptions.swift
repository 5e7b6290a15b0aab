/// What an observation wants to hear, KVO's `NSKeyValueObservingOptions`.
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Events carry the value after the change.
    public static let new = ObservationOptions(rawValue: 1 << 0)
    /// Events carry the value before the change.
    public static let old = ObservationOptions(rawValue: 1 << 1)
    /// An event with the current value is sent when the observation is made.
    public static let initial = ObservationOptions(rawValue: 1 << 2)
    /// An extra event is sent before each change is applied.
    public static let prior = ObservationOptions(rawValue: 1 << 3)

    /// The wire names, in the order they are listed.
    public static let wireNames: [(String, ObservationOptions)] = [
        ("new", .new), ("old", .old), ("initial", .initial), ("prior", .prior),
    ]

    /// Parses a wire name (`"new"`, `"old"`, `"initial"`, `"prior"`).
    public init?(wireName: String) {
        guard let match = Self.wireNames.first(where: { $0.0 == wireName }) else { return nil }
        self = match.1
    }

    /// The wire names of the options set here.
    public var wireNames: [String] {
        Self.wireNames.filter { contains($0.1) }.map(\.0)
    }
}
