import ArgumentParser
import KVOClient

/// `kvoctl replace OBJECT KEYPATH INDEX VALUE [INDEX VALUE]…`: prints the seq.
struct ReplaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replace",
        abstract: "Replace elements of the array at a key path; prints the seq.",
        discussion: "Example: kvoctl replace todo items 0 done 2 '{\"x\":1}'")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var conditions: ConditionOptions
    @Argument(help: "The object's name.") var object: String
    @Argument(help: "A dotted key path to an array.") var keyPath: String
    @Argument(help: ArgumentHelp("Pairs of an index and its new value.", valueName: "index value"))
    var pairs: [String]

    func validate() throws {
        guard !pairs.isEmpty, pairs.count.isMultiple(of: 2) else {
            throw ValidationError("give INDEX VALUE pairs")
        }
        for index in stride(from: 0, to: pairs.count, by: 2) where Int(pairs[index]).map({ $0 < 0 }) ?? true {
            throw ValidationError("\(pairs[index]) is not an index")
        }
        for value in stride(from: 1, to: pairs.count, by: 2) { _ = try ValueArgument.parse(pairs[value]) }
    }

    func run() async throws {
        let indexes = stride(from: 0, to: pairs.count, by: 2).compactMap { Int(pairs[$0]) }
        let values = try stride(from: 1, to: pairs.count, by: 2).map { try ValueArgument.parse(pairs[$0]) }
        let (ifModSeq, ifValue) = (conditions.ifModSeq, try conditions.parsedIfValue)
        let seq = try await connection.run { connection throws(KVOClientError) in
            try await connection.replace(object, keyPath, at: indexes, with: values, ifModSeq: ifModSeq,
                                         ifValue: ifValue)
        }
        Output.line(String(seq))
    }
}
