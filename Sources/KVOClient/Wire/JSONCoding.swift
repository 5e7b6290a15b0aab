import Foundation
import KVOValues

/// The bridge between Codable and kvod's JSON: Foundation's encoder and
/// decoder at the edges, the engine's writer for ``JSONValue``s, so that a
/// `JSONValue` goes out exactly as it is (large integers included).
enum JSONCoding {
    /// `value` as compact JSON text. Object members come out sorted by name:
    /// Foundation's encoder does not keep their declaration order on Linux, and
    /// kvod keeps members in the order written, so sorting keeps documents stable.
    static func encode(_ value: some Encodable) throws(KVOClientError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw KVOClientError(.encodingFailed, "cannot encode \(type(of: value)) as JSON: \(error)")
        }
    }

    /// `values` as a JSON array.
    static func encode(_ values: [some Encodable]) throws(KVOClientError) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (position, value) in values.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: try encode(value))
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    /// `value` decoded as `T` by way of its JSON text.
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(KVOClientError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(value.jsonBytes))
        } catch {
            throw KVOClientError(.decodingFailed, "cannot decode \(value.jsonString.prefix(200)) as \(type): \(error)")
        }
    }
}
