extension KVOConnection {
    /// Sends one protocol line as it is, for tools that speak the protocol
    /// themselves (`kvoctl raw`); `onReply` gets kvod's reply line, on the
    /// connection's reader thread, in the order the lines were sent.
    ///
    /// Events that the line's `observe` brings go to the configuration's
    /// ``Configuration/onUnroutedEvent``. Without a reply within the
    /// configuration's ``Configuration/requestTimeout``, `onReply` gets a
    /// `KVOClientError.Code.timedOut` failure instead. A line that kvod ignores (empty, or
    /// only `\r`) is not sent, since no reply would come: then the result is false.
    /// `onReply` must not block.
    ///
    /// - Precondition: `line` holds no newline.
    @discardableResult
    public func sendRaw(_ line: String, onReply: @escaping @Sendable (Result<String, KVOClientError>) -> Void) -> Bool {
        precondition(!line.utf8.contains(UInt8(ascii: "\n")), "a raw line must not contain a newline")
        guard !line.isEmpty, line != "\r" else { return false }
        core.send(Array(line.utf8) + [UInt8(ascii: "\n")], .caller(core.waiter(.line(onReply))))
        return true
    }
}
