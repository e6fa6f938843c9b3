# SPDX-License-Identifier: Apache-2.0
"""One SGD-with-momentum step of torchvision architectures in float64, in PyTorch and in
`tscope profile --train --steps 1 --warmup 0 --save-model`, from the same weights, batch and
labels: every weight and running average that the step moves must agree within 1e-4 of that
tensor's largest change (steps that are rounding of a zero gradient left out).

In float64 no rounding hides a wrong gradient, however ill-conditioned the step (batch norms over
a few values amplify float32 rounding to tens of percent of a step): what differs is the step's
definition. So each module is first made deterministic and distinct: dropout and stochastic depth
off (random draws in PyTorch, absent from the export), every parameter jittered and every batch
norm's statistics spread (the exporter merges initializers of equal value, and merged weights
train as one). Exports keep the batch norms (TrainingMode.PRESERVE) and every weight as an
initializer. Tensorscope runs float64 on its reference kernels, so this checks the training graph
(imports, gradients, batch-norm training, rewrites), and the float32 kernels are checked against
those references elsewhere. Running averages differ by the float32 rounding of the ONNX momentum
attribute: up to 3.3e-5 of the step for MNASNet's momentum of 0.0003.

Usage: python3 check_training_architectures.py TSCOPE WORK_DIR [ARCH[:SIZE],...]
Prints one line per architecture; exits 1 on a mismatch, 77 (CTest's skip) when torch or
torchvision cannot be imported (1 with TSCOPE_TEST_REQUIRE_TORCH=1, as the zoo tier sets).
"""
import os
import subprocess
import sys
import time

import numpy

from check_training_step import float_initializers, import_modules, one_step_command

LEARNING_RATE = 0.01
MOMENTUM = 0.9
TOLERANCE = 1e-4
ZERO_STEP = 1e-10
BATCH = 2
CLASSES = 1000
# Each a distinct way of building a network: residual and bottleneck blocks, grouped and
# depthwise convolutions, concatenation, channel shuffle, squeeze-excitation with hard and plain
# sigmoids, SiLU, layer norms over channels with layer scale, inception branches, fire modules,
# large-kernel convolutions with max pools and fully connected layers (SIZE: the image side).
ARCHITECTURES = ("resnet18", "resnext50_32x4d", "densenet121", "mobilenet_v2",
                 "mobilenet_v3_small", "efficientnet_b0", "shufflenet_v2_x0_5", "regnet_y_400mf",
                 "mnasnet0_5", "googlenet", "convnext_tiny", "squeezenet1_1", "alexnet:224")
# Auxiliary classifiers make the training forward return a tuple; the export has one output.
OPTIONS = {"googlenet": {"aux_logits": False, "init_weights": True}}


def deterministic_distinct(torch, torchvision, module):
    """`module` with no random draws in its training forward and no two equal parameters."""
    for child in module.modules():
        if isinstance(child, torch.nn.Dropout):
            child.p = 0.0
        if isinstance(child, torchvision.ops.StochasticDepth):
            child.p = 0.0
    # The training comparison's own spreading of batch norms (imported here: it needs torch).
    import training_models  # noqa: E402 (benchmarks/onnx, on the path check_training_step sets)
    training_models.spread_batch_norms(module)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.add_(torch.empty_like(parameter).uniform_(-0.01, 0.01))
    return module


def check(torch, torchvision, tscope, work, spec):
    """(ok, summary line) of one architecture."""
    name, _, size = spec.partition(":")
    size = int(size or 64)
    torch.manual_seed(0)
    factory = getattr(torchvision.models, name)
    module = deterministic_distinct(torch, torchvision, factory(**OPTIONS.get(name, {})))
    module = module.double().train()
    batch = torch.randn(BATCH, 3, size, size, dtype=torch.float64)
    labels = torch.randint(0, CLASSES, (BATCH,))
    model_path = os.path.join(work, f"{name}.onnx")
    module.eval()
    torch.onnx.export(module, (batch,), model_path, opset_version=17, input_names=["input"],
                      output_names=["output"], do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    module.train()
    numpy.save(os.path.join(work, f"{name}.input.npy"), batch.numpy())
    numpy.save(os.path.join(work, f"{name}.labels.npy"), labels.numpy().astype(numpy.int64))
    trained_path = os.path.join(work, f"{name}.trained.onnx")
    command = one_step_command(tscope, model_path, os.path.join(work, f"{name}.input.npy"),
                               os.path.join(work, f"{name}.labels.npy"), trained_path,
                               LEARNING_RATE, MOMENTUM)
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        return False, f"tscope exited with {run.returncode}: {run.stderr.strip()[-1000:]}"

    initial = {key: value.detach().numpy().copy() for key, value in module.state_dict().items()}
    optimizer = torch.optim.SGD(module.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
    torch.nn.functional.cross_entropy(module(batch), labels).backward()
    optimizer.step()
    expected = {key: value.detach().numpy() for key, value in module.state_dict().items()}

    trained = float_initializers(trained_path)
    steps = {key: float(numpy.max(numpy.abs(value - initial[key])))
             for key, value in expected.items() if value.dtype == numpy.float64}
    # A step this far below the largest is rounding of a gradient that is zero in exact
    # arithmetic: the shift of a batch norm that only feeds a convolution and another batch norm,
    # which removes any per-channel constant. Its relative error means nothing.
    floor = ZERO_STEP * max(steps.values())
    worst, worst_name, failed = 0.0, "", []
    compared = set()
    for tensor, value in trained.items():
        reference = expected.get(tensor)
        if reference is None or reference.shape != value.shape or steps[tensor] <= floor:
            continue
        step = steps[tensor]
        compared.add(tensor)
        error = float(numpy.max(numpy.abs(value - reference))) / step
        if error > worst:
            worst, worst_name = error, tensor
        if error > TOLERANCE:
            failed.append(f"{tensor} ({error:.2g})")
    # Every float tensor the step moves must have been compared, or the check proves less.
    moved = {key for key, step in steps.items() if step > floor}
    missing = sorted(moved - compared)
    ok = not failed and not missing
    return ok, (f"compared={len(compared)} max_step_error={worst:.2g} ({worst_name})"
                + (f" mismatched={','.join(failed[:10])}" if failed else "")
                + (f" not_compared={','.join(missing[:10])}" if missing else ""))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    tscope, work = sys.argv[1], sys.argv[2]
    specs = sys.argv[3].split(",") if len(sys.argv) == 4 else ARCHITECTURES
    modules, status = import_modules("torch", "torchvision")
    if modules is None:
        return status
    torch, torchvision = modules
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    status = 0
    for spec in specs:
        start = time.monotonic()
        ok, summary = check(torch, torchvision, tscope, work, spec)
        print(f"architecture={spec} weights={'match' if ok else 'MISMATCH'} {summary} "
              f"time_s={time.monotonic() - start:.1f}", flush=True)
        status = status if ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
