import KVOEngine
import KVOProtocol

/// Compact events (``DeliveryOptions/compact``): each names its observation
/// by the number kvod gave it, which the `observe` reply returns. The
/// observation's own initial and replayed events come before that reply; by
/// then every earlier request is answered, so a number not known yet is the
/// observation of the registration awaiting its reply.
extension ConnectionCore {
    func routeCompact(_ number: UInt64, _ members: JSONObject, _ line: UnsafeRawBufferPointer) throws(KVOClientError) {
        let key = state.withLock { state -> ObservationKey? in
            if let key = state.compactKeys[number] { return key }
            guard case .registration(let entry, _)? = state.awaiting.first, entry.delivery.compact else { return nil }
            state.compactKeys[number] = entry.key
            return entry.key
        }
        guard let key else {
            configuration.onUnroutedEvent?(String(decoding: line, as: UTF8.self))
            return
        }
        guard let event = WireEvent(compact: members, of: key) else {
            let text = String(decoding: line.prefix(200), as: UTF8.self)
            throw KVOClientError(.protocolViolation, "kvod sent a malformed compact event: \(text)")
        }
        route(event, line)
    }
}
