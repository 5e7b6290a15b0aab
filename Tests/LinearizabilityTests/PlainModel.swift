import Linearizability

/// A model as the checker would see it without the shortcuts a model may
/// offer (no end state told, no operation known never to fit): the plain
/// search that tests compare the shortcuts against.
struct PlainModel<Model: LinearizabilityModel>: LinearizabilityModel {
    let model: Model

    var initialState: Model.State { model.initialState }
    func step(_ state: Model.State, _ input: Model.Input, _ output: Model.Output?) -> [Model.State] {
        model.step(state, input, output)
    }
    func describe(_ input: Model.Input, _ output: Model.Output?) -> String { model.describe(input, output) }
    func describe(_ state: Model.State) -> String { model.describe(state) }
}
