import ArgumentParser
import KVOClient
import KVOValues

/// `--if-mod-seq N` and `--if-value JSON`, shared by the write commands
/// (docs/PROTOCOL.md, "Conditional writes"). A condition that does not hold
/// changes nothing and exits with status 5.
struct ConditionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Apply only if the value's modSeq is N (0: only if nothing is there).",
        discussion: "`kvoctl get --mod-seq` prints a value's modSeq.", valueName: "n"))
    var ifModSeq: UInt64?
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Apply only if the current value equals this JSON (-5 works; quote a string that looks like JSON).",
        valueName: "json"))
    var ifValue: String?

    func validate() throws { _ = try parsedIfValue }

    var parsedIfValue: JSONValue? {
        get throws { try ifValue.map(ValueArgument.parse) }
    }
}
