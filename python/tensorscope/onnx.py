# SPDX-License-Identifier: Apache-2.0
"""ts.onnx: run, profile and train ONNX models from Python.

    f = ts.onnx.load("model.onnx", profile=True)
    outputs = f(batch)           # one array per model output, in order
    f.profile.summary()          # Apply rows name the model file and node

    model = ts.onnx.import_model("model.onnx", trainable=True)
    (_, x), (_, logits) = model.inputs[0], model.outputs[0]
    y = T.lvector("y")
    cost = T.nnet.categorical_crossentropy(T.nnet.softmax(logits), y).mean()
    params = [p for _, p in model.parameters]
    updates = [(p, p - 0.01 * g) for p, g in zip(params, ts.grad(cost, params))]
    train = ts.function([x, y], cost, updates=updates + model.updates, profile=True)
    model.save("trained.onnx")   # the model file with the trained weights
"""
from . import _core
from .compile import function


class Model:
    """What the importer found: source, opset, producer, node_count, and the graph's inputs,
    outputs and initializers as (ONNX name, Variable) pairs. A trainable import also has
    ``parameters``, the (name, shared Variable) pairs of the weights the outputs depend on, and
    ``updates``, the (shared, new value) pairs a training function must apply after each call
    (batch norms' running averages, dropout's random states)."""

    def __init__(self, imported):
        self.source = imported["source"]
        self.opset = imported["opset"]
        self.producer = imported["producer"]
        self.node_count = imported["node_count"]
        self.inputs = imported["inputs"]
        self.outputs = imported["outputs"]
        self.initializers = imported["initializers"]
        self.parameters = imported["parameters"]
        self.updates = imported["updates"]

    def save(self, path):
        """Writes the model file with every shared initializer's current value (the trained
        weights and running averages) to `path`, atomically; nodes and metadata are kept."""
        _core.write_trained_onnx(str(self.source), self.initializers, str(path))


def import_model(path, input_dims=None, initializers_as_constants=False, trainable=False,
                 random_seed=0):
    """Imports `path` as a Model; input_dims gives dims for symbolic inputs, by input name
    (None or -1 for a dim left unknown). ``trainable=True`` imports the model's training form
    (docs/onnx.md, "Training an imported model"): float weights as shared variables, batch norms
    on the batch's statistics, dropout active, drawing from `random_seed`."""
    dims = {name: [-1 if dim is None else dim for dim in shape]
            for name, shape in (input_dims or {}).items()}
    return Model(_core.import_onnx(str(path), dims, initializers_as_constants, trainable,
                                   random_seed))


def load(path, input_dims=None, profile=None, name=None, initializers_as_constants=False):
    """Imports `path` and compiles it: a function taking the model's inputs in order and
    returning a list with one array per output (inputs the outputs do not read are accepted).
    ``f.model`` is the imported Model."""
    model = import_model(path, input_dims, initializers_as_constants)
    compiled = function([variable for _, variable in model.inputs],
                        [variable for _, variable in model.outputs],
                        name=name or str(path), profile=profile, on_unused_input="ignore")
    compiled.model = model
    return compiled


def read_tensor(path):
    """A serialized TensorProto (.pb, the format of ONNX's test data) as an array."""
    return _core.read_onnx_tensor(str(path))
