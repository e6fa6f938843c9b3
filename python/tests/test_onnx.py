# SPDX-License-Identifier: Apache-2.0
"""ts.onnx.load runs an ONNX model (Debian's libonnx-testdata) and profiles it; a trainable import
trains with ts.grad and saves its weights back into a model file."""
import os

import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T

CASES = "/usr/share/libonnx-testdata/data/node"


def case(name):
    path = os.path.join(CASES, name)
    if not os.path.isdir(path):
        pytest.skip(f"{path} is missing (libonnx-testdata)")
    return path


def test_load_runs_the_model_and_profiles_it():
    path = case("test_relu")
    f = ts.onnx.load(os.path.join(path, "model.onnx"), profile=True)
    x = ts.onnx.read_tensor(os.path.join(path, "test_data_set_0", "input_0.pb"))
    want = ts.onnx.read_tensor(os.path.join(path, "test_data_set_0", "output_0.pb"))
    (got,) = f(x)
    np.testing.assert_allclose(got, want)
    assert [name for name, _ in f.model.inputs] == ["x"]
    rows = f.profile.apply_rows()
    assert rows and rows[0]["source_site"].startswith("model.onnx:")
    assert rows[0]["user_op"].startswith("onnx:Relu")


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(ts.IoError):
        ts.onnx.load(str(tmp_path / "missing.onnx"))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(ts.ParseError) as caught:
        ts.onnx.load(str(broken))
    assert "broken.onnx" in str(caught.value)


# A minimal ONNX writer (protobuf wire format), so that the tests below need no onnx package.
def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number, payload):
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _tensor(name, array):  # TensorProto: dims, data_type FLOAT, name, raw_data
    return (b"".join(_field(1, int(d)) for d in array.shape) + _field(2, 1) + _field(8, name)
            + _field(9, np.ascontiguousarray(array, dtype="<f4").tobytes()))


def _value_info(name, dims):  # ValueInfoProto with a float tensor type of fixed dims
    shape = b"".join(_field(1, _field(1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, 1) + _field(2, shape)))


def _node(op_type, inputs, outputs, floats=None, ints=None):
    attributes = [_field(1, key) + _varint(2 << 3 | 5) + np.float32(value).tobytes() + _field(20, 1)
                  for key, value in (floats or {}).items()]
    attributes += [_field(1, key) + _field(3, value) + _field(20, 2)
                   for key, value in (ints or {}).items()]
    return (b"".join(_field(1, name) for name in inputs)
            + b"".join(_field(2, name) for name in outputs) + _field(4, op_type)
            + b"".join(_field(5, attribute) for attribute in attributes))


def write_model(path, nodes, initializers, inputs, outputs):
    graph = (b"".join(_field(1, node) for node in nodes) + _field(2, "g")
             + b"".join(_field(5, _tensor(name, value)) for name, value in initializers.items())
             + b"".join(_field(11, _value_info(name, dims)) for name, dims in inputs.items())
             + b"".join(_field(12, _value_info(name, dims)) for name, dims in outputs.items()))
    model = _field(1, 7) + _field(2, "test") + _field(7, graph) + _field(8, _field(2, 13))
    path.write_bytes(model)
    return str(path)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
W0 = RNG.standard_normal((2, 3)).astype(np.float32)
B0 = RNG.standard_normal(2).astype(np.float32)


def linear_model(tmp_path):
    """y = x . W^T + b (ONNX Gemm with transB), W and b initializers."""
    return write_model(tmp_path / "linear.onnx", [_node("Gemm", ["x", "W", "b"], ["y"],
                                                         ints={"transB": 1})],
                       {"W": W0, "b": B0}, {"x": [4, 3]}, {"y": [4, 2]})


def test_trainable_import_trains_with_grad_and_saves_the_weights(tmp_path):
    path = linear_model(tmp_path)
    model = ts.onnx.import_model(path, trainable=True)
    assert [name for name, _ in model.parameters] == ["W", "b"]
    assert model.updates == []
    (_, x), (_, y) = model.inputs[0], model.outputs[0]
    cost = T.mean(T.sqr(y))
    params = [p for _, p in model.parameters]
    rate = 0.1
    updates = [(p, p - rate * g) for p, g in zip(params, ts.grad(cost, params))]
    train = ts.function([x], cost, updates=updates + model.updates, profile=True)
    train(X)
    # NumPy's step: d mean(y^2) / dy = 2 y / y.size.
    dy = 2 * (X @ W0.T + B0) / 8
    w1, b1 = W0 - rate * dy.T @ X, B0 - rate * dy.sum(axis=0)
    np.testing.assert_allclose(params[0].get_value(), w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(params[1].get_value(), b1, rtol=1e-5, atol=1e-6)
    # The gradient nodes point into the model file.
    assert any(row["user_op"].startswith("grad(onnx:Gemm") for row in train.profile.apply_rows())

    saved = tmp_path / "trained.onnx"
    model.save(saved)
    (trained_output,) = ts.onnx.load(str(saved))(X)
    np.testing.assert_allclose(trained_output, X @ w1.T + b1, rtol=1e-5, atol=1e-6)
    (original_output,) = ts.onnx.load(path)(X)  # the source file is left as it was
    np.testing.assert_allclose(original_output, X @ W0.T + B0, rtol=1e-5, atol=1e-6)


def test_trainable_import_gives_batch_norm_running_averages_as_updates(tmp_path):
    mean0, var0 = np.array([0.5, -0.5], np.float32), np.array([1.5, 0.5], np.float32)
    path = write_model(
        tmp_path / "linear_bn.onnx",
        [_node("Gemm", ["x", "W", "b"], ["h"], ints={"transB": 1}),
         _node("BatchNormalization", ["h", "scale", "shift", "mean", "var"], ["y"],
               floats={"momentum": 0.75, "epsilon": 1e-5})],
        {"W": W0, "b": B0, "scale": np.ones(2, np.float32), "shift": np.zeros(2, np.float32),
         "mean": mean0, "var": var0},
        {"x": [4, 3]}, {"y": [4, 2]})
    model = ts.onnx.import_model(path, trainable=True)
    assert [name for name, _ in model.parameters] == ["W", "b", "scale", "shift"]
    assert len(model.updates) == 2
    (_, x), (_, y) = model.inputs[0], model.outputs[0]
    (out,) = ts.function([x], [y], updates=model.updates)(X)
    h = X @ W0.T + B0
    np.testing.assert_allclose(out, (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-5), rtol=1e-4,
                               atol=1e-4)
    running = {name: value.get_value() for name, value in model.initializers
               if name in ("mean", "var")}
    # ONNX's running average with the unbiased batch variance, as PyTorch trains it.
    np.testing.assert_allclose(running["mean"], 0.75 * mean0 + 0.25 * h.mean(0), rtol=1e-5)
    np.testing.assert_allclose(running["var"], 0.75 * var0 + 0.25 * h.var(0, ddof=1), rtol=1e-5)


def test_save_names_an_unwritable_destination(tmp_path):
    model = ts.onnx.import_model(linear_model(tmp_path), trainable=True)
    with pytest.raises(ts.IoError) as caught:
        model.save(tmp_path / "missing_dir" / "trained.onnx")
    assert "missing_dir" in str(caught.value)
