@testable import KVOEngine

/// What only the tests ask of the shared controller.
extension SharedController {
    /// Whether anything observes this object by its name (these tests
    /// observe no prefixes; the index's object roots are its own).
    func isObserved(_ object: String) -> Bool {
        node(.object(object), .wholeDocument) != nil
    }

    /// Bytes of events encoded since start (``EventVariantEncoder/encodedBytes``).
    var encodedEventBytes: Int { encoder.encodedBytes }

    /// How many prefixes are observed.
    var observedPrefixCount: Int { prefixRoots.count }

    /// The node of `keyPath` in `scope`, made (with the nodes above it) if missing.
    func nodeCreating(_ scope: ObservationScope, _ keyPath: ObservedPath) -> PathNode {
        nodeCreating(keyPath, below: rootCreating(scope))
    }
}
