import ArgumentParser
import Foundation
import KVOClient
import KVOValues

/// `--string` and `--json-file`, for the commands that take values (set,
/// insert, replace): where a value comes from when it is not JSON on the
/// command line.
struct ValueOptions: ParsableArguments {
    @Flag(help: "Take each VALUE verbatim as a string, not as JSON (also -5, True or {x}).")
    var string = false
    @Option(help: ArgumentHelp(
        "Read the value as JSON from this file, or from standard input for -, instead of a VALUE argument.",
        valueName: "path"))
    var jsonFile: String?

    func validate() throws {
        if string && jsonFile != nil { throw ValidationError("--string and --json-file exclude each other") }
    }

    /// One VALUE argument as the options say: verbatim with `--string`, else JSON or a bare word.
    func value(_ text: String) throws(ValidationError) -> JSONValue {
        string ? .string(text) : try ValueArgument.parse(text)
    }

    func values(_ texts: [String]) throws(ValidationError) -> [JSONValue] {
        var values: [JSONValue] = []
        for text in texts { values.append(try value(text)) }
        return values
    }

    /// The value of `--json-file`, or nil without it. Read once: standard input can be read only once.
    func fileValue() throws(CommandFailure) -> JSONValue? {
        guard let jsonFile else { return nil }
        let source = jsonFile == "-" ? "standard input" : jsonFile
        let data: Data
        do {
            data = jsonFile == "-" ? try LocalFile.readStandardInput() : try LocalFile.read(jsonFile)
        } catch {
            throw .usage("cannot read --json-file \(source): \(error.reason)")
        }
        do {
            return try JSONReader.parse(data)
        } catch {
            throw .usage("--json-file \(source) does not hold one JSON value: \(error.message)")
        }
    }
}
