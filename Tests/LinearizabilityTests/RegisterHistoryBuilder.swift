import Linearizability

/// Small register histories written as the tests read them: one object with
/// key paths `a` and `b`, both at value 0 (`init`) and modSeq 1 (the seq of the last write) at first;
/// values are numbers, named `v<n>` in reports.
struct RegisterHistoryBuilder {
    private(set) var operations: [HistoryOperation<RegisterInput, RegisterOutput>] = []

    static let a = 0, b = 1
    static let model = KeyPathRegisterModel(initial: ObjectRegisters(values: [0, 0], modSeqs: [1, 1], lastSeq: 1),
                                            pathNames: ["a", "b"], valueNames: ["init"] + (1...999).map { "v\($0)" })

    static func checker(maxStates: Int = 1_000_000) -> LinearizabilityChecker<KeyPathRegisterModel> {
        LinearizabilityChecker(model: model, maxStates: maxStates)
    }

    mutating func set(_ value: Int, _ call: Double, _ returned: Double?, path: Int = a, client: Int = 0,
                      condition: RegisterCondition? = nil, _ output: RegisterOutput?) {
        add(.write([RegisterWrite(path: path, value: value, condition: condition)]), call, returned, client, output)
    }

    mutating func batch(_ writes: [RegisterWrite], _ call: Double, _ returned: Double?, client: Int = 0,
                        _ output: RegisterOutput?) {
        add(.write(writes), call, returned, client, output)
    }

    mutating func get(_ call: Double, _ returned: Double, path: Int = a, client: Int = 1,
                      value: Int, modSeq: Int? = nil, after: ClosedRange<Int>? = nil) {
        add(.read(path: path), call, returned, client, .value(value, modSeq: modSeq, after: after))
    }

    mutating func getAll(_ call: Double, _ returned: Double, client: Int = 1, values: [Int]) {
        add(.readAll, call, returned, client, .values(values))
    }

    private mutating func add(_ input: RegisterInput, _ call: Double, _ returned: Double?, _ client: Int,
                              _ output: RegisterOutput?) {
        if let returned, let output {
            operations.append(HistoryOperation(client: client, input: input, call: call, output: output, returned: returned))
        } else {
            operations.append(HistoryOperation(client: client, input: input, call: call))
        }
    }

    func verdict(maxStates: Int = 1_000_000) -> LinearizabilityResult.Verdict {
        Self.checker(maxStates: maxStates).check(operations).verdict
    }
}
