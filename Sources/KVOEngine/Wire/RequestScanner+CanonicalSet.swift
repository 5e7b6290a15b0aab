extension RequestScanner {
    /// A `set` in the form clients write it: `{"op":"set","object":"…",
    /// "keyPath":"…","value":…}`, members in that order, no id, no space
    /// (KVOClient, kvoctl and kvod-bench all write sets so). The object and
    /// the key path are left as bytes of the line, valid while it is.
    struct CanonicalSet {
        let object: UnsafeRawBufferPointer
        let keyPath: UnsafeRawBufferPointer
        let value: JSONValue
    }

    /// The fast path's fast path: a canonical `set` read by matching its
    /// literal parts, with no member names to look up and no ``Fields`` to fill.
    /// Anything else (another order, an id, a space, an escape) is nil and
    /// goes the usual way; the object and key path are checked by the caller
    /// as ``Fields`` checks them, so both paths give the same result
    /// (`RequestScannerTests` holds them to it).
    static func scanCanonicalSet(_ line: UnsafeRawBufferPointer) -> CanonicalSet? {
        var scanner = RequestScanner(line)
        guard scanner.consume(literal: #"{"op":"set","object":"#), let object = scanner.plainString(),
              scanner.consume(literal: #","keyPath":"#), let keyPath = scanner.plainString(),
              scanner.consume(literal: #","value":"#), let value = scanner.anyValue(),
              scanner.consume(UInt8(ascii: "}")) else { return nil }
        scanner.skipWhitespace()
        guard scanner.position == line.count else { return nil }
        return CanonicalSet(object: object, keyPath: keyPath, value: value)
    }
}
