# SPDX-License-Identifier: Apache-2.0
"""ts.onnx.load runs an ONNX model (Debian's libonnx-testdata) and profiles it."""
import os

import numpy as np
import pytest

import tensorscope as ts

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
