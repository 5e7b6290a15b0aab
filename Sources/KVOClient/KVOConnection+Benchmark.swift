extension KVOConnection {
    /// For kvod-client-rate only (package access: not part of KVOClient's API):
    /// runs `bytes`, lines as kvod sends them, through the connection's reader
    /// path (framing, scanning, routing, handing on to the subscribers) on the
    /// calling thread, as if they had been read from the socket, so the
    /// decode-and-deliver path can be measured without one. Call only while
    /// kvod sends this connection nothing (its own reader thread is idle) and
    /// with whole lines.
    package func readForBenchmark(_ bytes: UnsafeRawBufferPointer) -> KVOClientError? {
        var reader = ConnectionCore.InboundReader()
        return reader.read(bytes, core)
    }
}
