# SPDX-License-Identifier: Apache-2.0
"""One SGD-with-momentum step of a small PyTorch model and of its ONNX export in Tensorscope
(`tscope profile --train --save-model`) from the same weights on the same batch: the updated
weights and batch-norm running averages must agree within 1e-4 of each tensor's largest value.

Usage: python3 check_training_step.py TSCOPE WORK_DIR
Exits 77 (CTest's skip) when torch cannot be imported (1 with TSCOPE_TEST_REQUIRE_TORCH=1, as the
zoo tier sets), 1 on a mismatch. The saved model is read without the onnx package (a protobuf
walk over its initializers, raw float32 or float64 data as tscope writes them).
"""
import importlib
import os
import subprocess
import sys

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "onnx"))
from check_outputs import varint  # noqa: E402

LEARNING_RATE = 0.1
MOMENTUM = 0.9
TOLERANCE = 1e-4


def fields(data):
    """(field number, value) pairs of a protobuf message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 2:
            length, i = varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")
        yield field, value


def import_modules(*names):
    """(modules, None) with the modules `names` imported, or (None, exit code) when one cannot be
    imported: 77, CTest's skip, or 1 with TSCOPE_TEST_REQUIRE_TORCH=1 (the zoo tier installs
    torch, so a skip there is a failure)."""
    try:
        return [importlib.import_module(name) for name in names], None
    except ImportError as error:
        if os.environ.get("TSCOPE_TEST_REQUIRE_TORCH") == "1":
            print(f"{' or '.join(names)} cannot be imported: {error}")
            return None, 1
        print(f"skipped: {' or '.join(names)} cannot be imported")
        return None, 77


def one_step_command(tscope, model, batch, labels, trained, learning_rate, momentum):
    """`tscope profile --train` taking one step of `model` (one thread) on the .npy batch of its
    input `input` and labels, and saving the trained model to `trained`."""
    return [tscope, "profile", model, "--train", "--steps", "1", "--warmup", "0", "--loss", "xent",
            "--lr", str(learning_rate), "--momentum", str(momentum), "--threads", "1",
            "--labels", labels, "--input-data", "input=" + batch, "--save-model", trained]


def float_initializers(path):
    """name -> array of every raw-data float32 (as float32) or float64 (as float64) initializer
    of an ONNX model file."""
    tensors = {}
    model = open(path, "rb").read()
    for field, graph in fields(model):
        if field != 7:  # ModelProto.graph
            continue
        for graph_field, initializer in fields(graph):
            if graph_field != 5:  # GraphProto.initializer
                continue
            name, dims, data_type, raw = "", [], 0, None
            for tensor_field, value in fields(initializer):
                if tensor_field == 1:
                    dims.append(value)
                elif tensor_field == 2:
                    data_type = value
                elif tensor_field == 8:
                    name = value.decode()
                elif tensor_field == 9:
                    raw = value
            if data_type in (1, 11) and raw is not None:  # FLOAT, DOUBLE
                dtype = "<f4" if data_type == 1 else "<f8"
                tensors[name] = numpy.frombuffer(raw, dtype=dtype).reshape(dims)
    return tensors


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tscope, work = sys.argv[1], sys.argv[2]
    modules, status = import_modules("torch")
    if modules is None:
        return status
    (torch,) = modules
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential()
    model.add_module("fc1", torch.nn.Linear(6, 8))
    model.add_module("bn", torch.nn.BatchNorm1d(8))
    model.add_module("relu", torch.nn.ReLU())
    model.add_module("fc2", torch.nn.Linear(8, 4))
    with torch.no_grad():  # running averages other than the defaults, so their update shows
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(16, 6)
    labels = torch.randint(0, 4, (16,))
    model_path = os.path.join(work, "mlp_bn.onnx")
    model.eval()
    torch.onnx.export(model, (x,), model_path, input_names=["input"], output_names=["logits"],
                      opset_version=13, do_constant_folding=False)
    numpy.save(os.path.join(work, "input.npy"), x.numpy())
    numpy.save(os.path.join(work, "labels.npy"), labels.numpy().astype(numpy.int64))

    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
    loss = torch.nn.functional.cross_entropy(model(x), labels)
    loss.backward()
    optimizer.step()
    expected = {name: value.detach().numpy() for name, value in model.state_dict().items()}

    trained_path = os.path.join(work, "mlp_bn_trained.onnx")
    command = one_step_command(tscope, model_path, os.path.join(work, "input.npy"),
                               os.path.join(work, "labels.npy"), trained_path, LEARNING_RATE,
                               MOMENTUM)
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout[-2000:], run.stderr, sep="\n")
        print(f"tscope exited with {run.returncode}: {' '.join(command)}")
        return 1
    initial = float_initializers(model_path)
    trained = float_initializers(trained_path)
    status = 0
    compared = moved_count = 0
    for name, value in sorted(trained.items()):
        if name not in expected:
            continue
        reference = expected[name]
        error = float(numpy.max(numpy.abs(value - reference)))
        scale = float(numpy.max(numpy.abs(reference)))
        moved = float(numpy.max(numpy.abs(reference - initial[name])))
        ok = value.shape == reference.shape and error <= TOLERANCE * scale
        moved_count += moved > 10 * TOLERANCE * scale
        print(f"{name}: max_abs_error={error:.3g} max_abs_value={scale:.3g} moved={moved:.3g} "
              f"ok={'yes' if ok else 'no'}")
        status = status if ok else 1
        compared += 1
    # Every parameter and both running averages are compared, and the step moves all of them
    # well beyond the tolerance but fc1.bias (a batch norm follows it: its gradient is zero), or
    # the check would prove nothing.
    if compared != 8 or moved_count != 7:
        print(f"compared {compared} tensors (expected 8), {moved_count} moved (expected 7): "
              f"{sorted(trained)}")
        status = 1
    print(f"torch loss {loss.item():.6f}; {'match' if status == 0 else 'MISMATCH'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
