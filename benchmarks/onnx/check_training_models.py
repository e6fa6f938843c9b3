# SPDX-License-Identifier: Apache-2.0
"""One training step of each training-comparison model (training_models.py) in PyTorch and in
`tscope profile --train --steps 1 --warmup 0 --save-model`, from the same weights, batch, labels,
learning rate and momentum: every updated weight and running average must agree with PyTorch's
float64 step within TOLERANCE of the largest change the step makes to that tensor.

Usage: python3 check_training_models.py --tscope PATH --work DIR [--models a,b,...]
Prints one `check model=NAME ...` line per model, and exits 1 on a mismatch.
"""
import argparse
import os
import subprocess
import sys

import numpy
import torch

import training_models

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "onnx"))
from check_training_step import float_initializers, one_step_command  # noqa: E402

# The step is compared, not the weight (a step is small next to its weight, whose float32 rounding
# alone is about 1e-7 of the weight), with a float64 step of PyTorch's. Both float32 steps differ
# from it by up to a few percent of the step in ResNet-18's deeper layers, where batch norms
# over few values amplify rounding.
TOLERANCE = 0.1
# torch.nn.LSTM's gates are (input, forget, cell, output), ONNX's (input, output, forget, cell).
ONNX_LSTM_GATES = (0, 3, 1, 2)


def onnx_lstm_tensors(state, prefix):
    """The exporter's W, R and B of the LSTM layer `prefix` in `state`, keyed by shape, each with
    the state names it is made of: with constant folding the exporter names them after nothing
    in the module."""
    def gates(value):
        return numpy.concatenate([numpy.split(value, 4)[i] for i in ONNX_LSTM_GATES])

    names = [prefix + suffix for suffix in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                            "bias_hh_l0")]
    w, r = gates(state[names[0]])[None], gates(state[names[1]])[None]
    b = numpy.concatenate([gates(state[names[2]]), gates(state[names[3]])])[None]
    return {w.shape: (w, names[:1]), r.shape: (r, names[1:2]), b.shape: (b, names[2:])}


def state_after_step(name, dtype):
    """The module's state after one PyTorch step in `dtype`, as the ONNX file's initializers: by
    name, and LSTM weights by shape (onnx_lstm_tensors)."""
    module, batch, labels = training_models.build(name)
    module = module.to(dtype)
    training_models.step(module, training_models.optimizer(module), batch.to(dtype), labels)
    state = {key: value.detach().numpy().copy() for key, value in module.state_dict().items()}
    by_shape = {}
    for child_name, child in module.named_modules():
        if isinstance(child, torch.nn.LSTM):
            by_shape.update(onnx_lstm_tensors(state, child_name + "."))
    return state, by_shape


def reference_of(tensor, value, state, by_shape):
    """(reference value, state names it covers) of an initializer, or (None, [])."""
    if tensor in state:
        return state[tensor], [tensor]
    return by_shape.get(value.shape, (None, []))


def check_model(name, tscope, work):
    """(ok, summary) of one step of `name`: Tensorscope's float32 step against PyTorch's float64
    step (and, for scale, PyTorch's float32 step against the same)."""
    module, batch, labels = training_models.build(name)
    model_path = os.path.join(work, f"{name}.check.onnx")
    training_models.export(module, batch, model_path)
    numpy.save(os.path.join(work, f"{name}.input.npy"), batch.numpy())
    numpy.save(os.path.join(work, f"{name}.labels.npy"), labels.numpy().astype(numpy.int64))
    initial = float_initializers(model_path)
    exact, exact_by_shape = state_after_step(name, torch.float64)
    torch32, torch32_by_shape = state_after_step(name, torch.float32)

    trained_path = os.path.join(work, f"{name}.trained.onnx")
    command = one_step_command(tscope, model_path, os.path.join(work, f"{name}.input.npy"),
                               os.path.join(work, f"{name}.labels.npy"), trained_path,
                               training_models.LEARNING_RATE, training_models.MOMENTUM)
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        return False, f"tscope exited with {run.returncode}: {run.stderr.strip()[-1000:]}"
    worst = worst_torch32 = 0.0
    covered, failed = set(), []
    for tensor, value in float_initializers(trained_path).items():
        reference, names = reference_of(tensor, value, exact, exact_by_shape)
        if reference is None or reference.shape != value.shape:
            continue
        step = reference - initial[tensor]
        scale = float(numpy.max(numpy.abs(step)))
        if scale == 0:  # a weight the loss does not depend on
            continue
        covered.update(names)
        error = float(numpy.max(numpy.abs(value - reference))) / scale
        torch32_value, _ = reference_of(tensor, value, torch32, torch32_by_shape)
        worst_torch32 = max(worst_torch32,
                            float(numpy.max(numpy.abs(torch32_value - reference))) / scale)
        worst = max(worst, error)
        if error > TOLERANCE:
            failed.append(f"{tensor} ({error:.2g})")
    # Every float state tensor that PyTorch's step moves must have been compared.
    moved = {key for key, value in torch32.items() if value.dtype == numpy.float32
             and key in exact and numpy.any(value != module.state_dict()[key].numpy())}
    missing = sorted(moved - covered)
    ok = not failed and not missing
    return ok, (f"compared={len(covered)} max_step_error={worst:.2g} "
                f"torch_float32_max_step_error={worst_torch32:.2g}"
                + (f" mismatched={','.join(failed)}" if failed else "")
                + (f" not_compared={','.join(missing)}" if missing else ""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tscope", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--models", default=",".join(training_models.MODELS))
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    status = 0
    for name in args.models.split(","):
        ok, summary = check_model(name, args.tscope, args.work)
        print(f"check model={name} weights={'match' if ok else 'MISMATCH'} {summary}", flush=True)
        status = status if ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
