/// Operations of a history as lines a person reads: client, interval in
/// milliseconds from `origin`, input and answer, in call order.
public enum HistoryReport {
    public static func lines<Model: LinearizabilityModel>(
        _ indices: [Int], of history: [HistoryOperation<Model.Input, Model.Output>], model: Model, origin: Double
    ) -> [String] {
        indices.sorted { history[$0].call < history[$1].call || (history[$0].call == history[$1].call && $0 < $1) }
            .map { index in
                let operation = history[index]
                let returned = operation.returned.isFinite ? milliseconds(operation.returned - origin) : "∞"
                return "#\(index) client \(operation.client) [\(milliseconds(operation.call - origin)), \(returned)] "
                    + model.describe(operation.input, operation.output)
            }
    }

    /// `12.345` ms, to the microsecond.
    public static func milliseconds(_ seconds: Double) -> String {
        let micro = Int((seconds * 1_000_000).rounded())
        let sign = micro < 0 ? "-" : ""
        let magnitude = abs(micro)
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
