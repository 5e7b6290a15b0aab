import KVOProtocol

/// Encodes requests and parses what comes back, for one peer.
///
/// A change carries the payload `"<index>,<sentAt>"`: the setter's running
/// index, from which observers detect lost and out-of-order events, and the
/// time it was (or was scheduled to be) sent, from which they measure latency.
/// kvod gets it as a JSON string value, Redis as the `PUBLISH`/`SET` argument,
/// etcd as a put's value (base64, as its JSON gateway carries values).
///
/// kvod's requests are spelled as `shape`'s client spells them; each request
/// that carries an id carries the setter's running index. KVOClient's and
/// socat's spellings come from KVOProtocol's `RequestEncoder`, as KVOClient's
/// own requests do; Python's (`json.dumps`) is its own, spaces and all.
struct Wire: Sendable {
    let peer: Peer
    let flavour: RedisFlavour
    var shape: ClientShape = .kvoclient
    /// Whether kvod's observers ask for compact events (`"compact":true`,
    /// docs/PROTOCOL.md "Compact events"); Redis has no such form.
    var compactEvents = false

    /// The bytes of a change request to `key` up to its payload, precomputed per key.
    func changePrefix(_ key: BenchKey) -> [UInt8] {
        switch peer {
        case .kvod:
            switch shape {
            case .kvoclient:
                return Self.setPrefix(key)
            case .idFirst:
                // After `{"id":N`, which ``appendChange(prefix:index:sentAt:into:)`` writes.
                return [UInt8(ascii: ",")] + Self.setPrefix(key).dropFirst()
            case .jsonDumps:
                return Array(#"{"op": "set", "object": "\#(key.object)", "keyPath": "\#(key.keyPath)", "value": ""#.utf8)
            }
        case .redis:
            let command = flavour == .pubSub ? "PUBLISH" : "SET"
            let name = key.redisKey
            return Array("*3\r\n$\(command.utf8.count)\r\n\(command)\r\n$\(name.utf8.count)\r\n\(name)\r\n$".utf8)
        case .etcd:
            return Self.etcdPutPrefix(key)
        }
    }

    /// Appends a whole change request: `prefix` from ``changePrefix(_:)``, then the payload.
    @inline(__always)
    func appendChange(prefix: [UInt8], index: Int, sentAt: UInt64, into bytes: inout [UInt8]) {
        switch peer {
        case .kvod:
            if shape == .idFirst {
                bytes.append(contentsOf: Self.idFirstStart)
                appendDecimal(UInt64(index), to: &bytes)
            }
            bytes.append(contentsOf: prefix)
            appendDecimal(UInt64(index), to: &bytes)
            bytes.append(UInt8(ascii: ","))
            appendDecimal(sentAt, to: &bytes)
            if shape == .jsonDumps {
                bytes.append(contentsOf: Self.jsonDumpsIDStart)
                appendDecimal(UInt64(index), to: &bytes)
                bytes.append(contentsOf: [UInt8(ascii: "}"), UInt8(ascii: "\n")])
            } else {
                bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "}"), UInt8(ascii: "\n")])
            }
        case .redis:
            bytes.append(contentsOf: prefix)
            let length = decimalDigitCount(UInt64(index)) + 1 + decimalDigitCount(sentAt)
            appendDecimal(UInt64(length), to: &bytes)
            bytes.append(contentsOf: [13, 10])
            appendDecimal(UInt64(index), to: &bytes)
            bytes.append(UInt8(ascii: ","))
            appendDecimal(sentAt, to: &bytes)
            bytes.append(contentsOf: [13, 10])
        case .etcd:
            Self.appendEtcdPut(prefix: prefix, index: index, sentAt: sentAt, into: &bytes)
        }
    }

    /// An observe request (kvod, options `new`, compact if ``compactEvents``) or a `SUBSCRIBE` (Redis).
    func observeRequest(_ key: BenchKey) -> [UInt8] {
        switch peer {
        case .kvod:
            let (object, keyPath) = (key.object, key.keyPath)
            switch shape {
            case .kvoclient, .idFirst:
                let id = shape == .idFirst ? 0 : nil
                var request = RequestEncoder(op: .observe, id: id, object: object, keyPath: keyPath)
                request.strings(.options, ["new"])
                if compactEvents { request.bool(.compact, true) }
                return request.line
            case .jsonDumps:
                let compact = compactEvents ? #", "compact": true"# : ""
                return Array(#"{"op": "observe", "object": "\#(object)", "keyPath": "\#(keyPath)", "options": ["new"]\#(compact), "id": 0}"#.utf8)
                    + [10]
            }
        case .redis:
            let channel = flavour == .pubSub ? key.redisKey : "__keyspace@0__:" + key.redisKey
            return Array("*2\r\n$9\r\nSUBSCRIBE\r\n$\(channel.utf8.count)\r\n\(channel)\r\n".utf8)
        case .etcd:
            return Self.etcdWatchRequest(key: Self.etcdKey(key), rangeEnd: nil)
        }
    }

    /// `{"op":"set","object":…,"keyPath":…,"value":"`: a set up to its string value's first byte.
    private static func setPrefix(_ key: BenchKey) -> [UInt8] {
        var request = RequestEncoder(op: .set, object: key.object, keyPath: key.keyPath)
        request.member(.value)
        return request.bytes + [UInt8(ascii: "\"")]
    }

    private static let idFirstStart = Array(LineFragment.idStart.description.utf8)
    private static let jsonDumpsIDStart = Array(#"", "id": "#.utf8)

    /// Parses every complete reply and event in `bytes`; returns how many
    /// bytes that took (the rest is an incomplete frame, to be completed by
    /// the next read).
    @inline(__always)
    func parse<H: InboundHandler>(_ bytes: UnsafeRawBufferPointer, _ handler: H) -> Int {
        switch peer {
        case .kvod: KVODParser.parse(bytes, handler)
        case .redis: RESPParser.parse(bytes, handler)
        // HTTP needs state across reads: each connection's own `HTTPResponseReader`.
        case .etcd: preconditionFailure("etcd's responses are read by the connection's HTTPResponseReader")
        }
    }
}
