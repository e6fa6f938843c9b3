# SPDX-License-Identifier: Apache-2.0
"""ts.onnx: run and profile ONNX models from Python.

    f = ts.onnx.load("model.onnx", profile=True)
    outputs = f(batch)           # one array per model output, in order
    f.profile.summary()          # Apply rows name the model file and node
"""
from . import _core
from .compile import function


class Model:
    """What the importer found: source, opset, producer, node_count, and the graph's inputs,
    outputs and initializers as (ONNX name, Variable) pairs."""

    def __init__(self, imported):
        self.source = imported["source"]
        self.opset = imported["opset"]
        self.producer = imported["producer"]
        self.node_count = imported["node_count"]
        self.inputs = imported["inputs"]
        self.outputs = imported["outputs"]
        self.initializers = imported["initializers"]


def import_model(path, input_dims=None, initializers_as_constants=False):
    """Imports `path` as a Model; input_dims gives dims for symbolic inputs, by input name
    (None or -1 for a dim left unknown)."""
    dims = {name: [-1 if dim is None else dim for dim in shape]
            for name, shape in (input_dims or {}).items()}
    return Model(_core.import_onnx(str(path), dims, initializers_as_constants))


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
