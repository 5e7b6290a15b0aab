import KVOValues
import KVOProtocol

/// Compact events (``DeliveryOptions/compact``): each names its observation
/// by the number kvod gave it, which the `observe` reply returns. The
/// observation's own initial and replayed events come before that reply; by
/// then every earlier request is answered, so a number not known yet is the
/// observation of the registration awaiting its reply.
extension ConnectionCore {
    /// A compact event (``InboundLine/compactChange(_:_:object:)``), placed in
    /// its observation and routed under one lock; a number not known hands the
    /// line to ``KVOConnection/Configuration/onUnroutedEvent``.
    func routeCompact(_ number: UInt64, _ scanned: WireEvent, object: String?, _ line: UnsafeRawBufferPointer,
                      into batch: inout DeliveryBatch) throws(KVOClientError) {
        var isPlaced = true
        let isRouted = state.withLock { state -> Bool in
            guard let key = Self.compactKey(number, in: &state) else { return false }
            guard scanned.place(in: key, object: object) else {
                isPlaced = false
                return true
            }
            return route(scanned, of: key, line, into: &batch, in: &state)
        }
        guard isPlaced else { throw InboundLine.violation("a malformed compact event", line) }
        if !isRouted { configuration.onUnroutedEvent?(String(decoding: line, as: UTF8.self)) }
    }

    /// The observation numbered `number`; nil when there is none.
    private static func compactKey(_ number: UInt64, in state: inout State) -> ObservationKey? {
        if let key = state.compactKeys[number] { return key }
        guard case .registration(let entry, _)? = state.awaiting.first, entry.delivery.compact else { return nil }
        state.compactKeys[number] = entry.key
        return entry.key
    }
}
