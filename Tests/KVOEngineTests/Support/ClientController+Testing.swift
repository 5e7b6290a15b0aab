@testable import KVOEngine

/// The one-object spellings of a client's unobserve and observation check
/// that only the tests use (the engine passes a scope).
extension ClientController {
    func unobserve(_ object: String, keyPath: ObservedPath) {
        unobserve(.object(object), keyPath: keyPath)
    }

    func unobserve(_ object: String) {
        unobserve(.object(object))
    }

    func isObserving(_ object: String, keyPath: ObservedPath) -> Bool {
        isObserving(.object(object), keyPath: keyPath)
    }
}
