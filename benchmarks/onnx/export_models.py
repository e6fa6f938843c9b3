# SPDX-License-Identifier: Apache-2.0
"""Exports models to ONNX with the example input and PyTorch's output for it, which
check_outputs.py compares with Tensorscope's answer.

Usage: python3 export_models.py DIR
  The benchmark models (scripts/bench_onnx) to DIR/<name>.onnx (opset 17, eval mode, fixed seed),
  with their input dims in DIR/<name>.dims.json for the ONNX Runtime script, the example input in
  DIR/<name>.input.npy and PyTorch's output in DIR/<name>.torch_output.npy.
Usage: python3 export_models.py --zoo DIR [--models a,b,...]
  The zoo's cases (models.zoo_cases(), `scripts/test zoo`) to DIR/<case>.onnx, with the input to
  run in DIR/<case>.input.npy and PyTorch's output in DIR/<case>.torch_output.npy. A case already
  in DIR is kept. An export that fails leaves its error in DIR/<case>.export_error.txt. Writes
  the list of cases to DIR/cases.json.
"""
import argparse
import json
import os
import time
import traceback

import numpy
import torch

from models import MODELS, ZOO, build, build_zoo, case_id, zoo_cases, zoo_input


def export(module, example, path, opset, dynamic):
    """Exports `module` traced on `example`, input "input" and output "output"; `dynamic` makes
    their axis 0 the symbolic dim "batch"."""
    dynamic_axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None
    torch.onnx.export(module, (example,), path, opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes=dynamic_axes,
                      do_constant_folding=True)


def save_reference(module, example, stem):
    with torch.inference_mode():
        output = module(example)
    numpy.save(stem + ".input.npy", example.numpy())
    numpy.save(stem + ".torch_output.npy", output.numpy())
    return output


def check_informative(output):
    """Fails when the outputs for the batch's first two entries differ by less than 1% of the
    output's size: a comparison with such a model would barely test what depends on the input."""
    spread = float((output[0] - output[1]).abs().max() / output.abs().max())
    if not spread >= 1e-2:
        raise ValueError(f"the output barely depends on the input (spread {spread:.2g}): "
                         "see models.make_informative")


def export_benchmark(directory):
    for name in MODELS:
        module, example = build(name)
        path = os.path.join(directory, name + ".onnx")
        with torch.no_grad():
            export(module, example, path, opset=17, dynamic=False)
        with open(os.path.join(directory, name + ".dims.json"), "w") as dims:
            json.dump({"input": list(example.shape)}, dims)
        save_reference(module, example, os.path.join(directory, name))
        print(f"exported {path}")


def export_zoo_case(case, module, stem):
    # With gradients on, as a user exports: under no_grad, nn.TransformerEncoder takes its fused
    # inference path, an op the exporter does not know.
    export(module, zoo_input(case.model, 1), stem + ".onnx.partial", case.opset, case.dynamic)
    output = save_reference(module, zoo_input(case.model, case.batch), stem)
    if case.batch > 1:
        check_informative(output)
    # Last, so that an interrupted export leaves no case that looks complete.
    os.replace(stem + ".onnx.partial", stem + ".onnx")


def export_zoo(directory, models):
    cases = zoo_cases()
    manifest = [dict(case._asdict(), id=case_id(case),
                     input_dims=[case.batch, *ZOO[case.model][1]]) for case in cases]
    with open(os.path.join(directory, "cases.json"), "w") as out:
        json.dump(manifest, out, indent=1)
    modules = {}
    for case in cases:
        stem = os.path.join(directory, case_id(case))
        done = any(os.path.exists(stem + suffix) for suffix in (".onnx", ".export_error.txt"))
        if done or (models and case.model not in models):
            continue
        start = time.perf_counter()
        try:
            if case.model not in modules:
                modules = {case.model: build_zoo(case.model)}  # the last model only
            export_zoo_case(case, modules[case.model], stem)
        except Exception as error:  # the exporter's limits are reported, not fatal
            for partial in (".onnx.partial", ".input.npy", ".torch_output.npy"):
                if os.path.exists(stem + partial):
                    os.remove(stem + partial)
            with open(stem + ".export_error.txt", "w") as out:
                out.write(f"{type(error).__name__}: {error}\n\n{traceback.format_exc()}")
            print(f"export failed {case_id(case)}: {str(error).splitlines()[0]}", flush=True)
            continue
        print(f"exported {case_id(case)} in {time.perf_counter() - start:.1f} s", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zoo", action="store_true", help="export the zoo's cases")
    parser.add_argument("--models", default="", help="zoo models to export (default: all)")
    parser.add_argument("directory")
    args = parser.parse_args()
    os.makedirs(args.directory, exist_ok=True)
    if args.zoo:
        export_zoo(args.directory, set(filter(None, args.models.split(","))))
    else:
        export_benchmark(args.directory)


if __name__ == "__main__":
    main()
