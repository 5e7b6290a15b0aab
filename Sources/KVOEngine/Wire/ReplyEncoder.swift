/// Writes replies: `{"id":…,"ok":true,…}` or
/// `{"id":…,"ok":false,"error":{"code":…,"message":…}}`, one line each.
///
/// The only place where a ``KVOEngineError`` becomes wire bytes.
struct ReplyEncoder {
    private(set) var bytes: [UInt8] = []

    /// Starts a success reply; add fields, then take ``finished``.
    init(okFor id: JSONValue?) {
        bytes.reserveCapacity(48)
        bytes.append(UInt8(ascii: "{"))
        if let id {
            bytes.append(contentsOf: #""id":"#.utf8)
            JSONWriter.write(id, into: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(contentsOf: #""ok":true"#.utf8)
    }

    mutating func field(_ name: String, _ value: JSONValue) {
        bytes.append(contentsOf: #",""#.utf8)
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: #"":"#.utf8)
        JSONWriter.write(value, into: &bytes)
    }

    mutating func field(_ name: String, integer: some BinaryInteger) {
        bytes.append(contentsOf: #",""#.utf8)
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: #"":"#.utf8)
        EventEncoder.appendDecimal(integer, to: &bytes)
    }

    var finished: [UInt8] {
        var line = bytes
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    /// A complete error reply.
    static func failure(id: JSONValue?, _ error: KVOEngineError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        bytes.append(UInt8(ascii: "{"))
        if let id {
            bytes.append(contentsOf: #""id":"#.utf8)
            JSONWriter.write(id, into: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(contentsOf: #""ok":false,"error":{"code":"#.utf8)
        JSONWriter.writeString(error.code.rawValue, into: &bytes)
        bytes.append(contentsOf: #","message":"#.utf8)
        JSONWriter.writeString(error.message, into: &bytes)
        for (name, value) in error.details {
            bytes.append(UInt8(ascii: ","))
            JSONWriter.writeString(name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &bytes)
        }
        bytes.append(contentsOf: "}}\n".utf8)
        return bytes
    }
}
