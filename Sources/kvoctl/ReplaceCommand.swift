import ArgumentParser
import KVOClient

/// `kvoctl replace OBJECT KEYPATH INDEX VALUE [INDEX VALUE]…`: prints the seq.
struct ReplaceCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "replace",
        abstract: "Replace elements of the array at a key path; prints the seq.",
        discussion: """
            VALUEs as for set: JSON, a bare word, or verbatim strings with --string; with --json-file, \
            one INDEX and its value from the file.
            Example: kvoctl replace todo items 0 done 2 '{"x":1}'
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @OptionGroup var values: ValueOptions
    @OptionGroup var waiting: AwaitOptions
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "The object's name, a dotted key path to an array, then pairs of an index and its new value "
            + "(one index and no value with --json-file).",
        valueName: "object keypath index value"))
    var words: [String] = []

    /// The object, the key path, the indexes, and the VALUE texts.
    private var parts: (object: String, keyPath: String, indexes: [Int], values: [String]) {
        get throws(ValidationError) {
            let words = try PositionalWords.values(words)
            guard words.count >= 2 else { throw ValidationError("give OBJECT KEYPATH, then INDEX VALUE pairs") }
            let rest = Array(words.dropFirst(2))
            if values.jsonFile != nil {
                guard rest.count == 1 else { throw ValidationError("with --json-file, give OBJECT KEYPATH INDEX") }
            } else {
                guard !rest.isEmpty, rest.count.isMultiple(of: 2) else { throw ValidationError("give INDEX VALUE pairs") }
            }
            var indexes: [Int] = []
            for position in stride(from: 0, to: rest.count, by: 2) {
                guard let index = Int(rest[position]), index >= 0 else {
                    throw ValidationError("\(rest[position]) is not an index")
                }
                indexes.append(index)
            }
            let texts = stride(from: 1, to: rest.count, by: 2).map { rest[$0] }
            return (words[0], words[1], indexes, texts)
        }
    }

    func validate() throws {
        _ = try values.values(try parts.values)
    }

    func run() async throws {
        let (object, keyPath, indexes, texts) = try parts
        let values = try values.fileValue().map { [$0] } ?? values.values(texts)
        try await connection.perform(.replace(object, keyPath, at: indexes, with: values, ifModSeq: conditions.ifModSeq,
                                              ifValue: conditions.parsedIfValue), waiting)
    }
}
