# SPDX-License-Identifier: Apache-2.0
"""Exports the benchmark models to DIR/<name>.onnx (opset 17, eval mode, fixed seed), with their
input dims in DIR/<name>.dims.json for the ONNX Runtime script, and the example input and
PyTorch's output for it in DIR/<name>.input.npy and DIR/<name>.torch_output.npy (check_outputs.py
compares Tensorscope's answer with it).

Usage: python3 export_models.py DIR
"""
import json
import os
import sys

import numpy
import torch

from models import MODELS, build


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    for name in MODELS:
        module, example = build(name)
        path = os.path.join(directory, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(module, (example,), path, opset_version=17,
                              input_names=["input"], output_names=["output"],
                              do_constant_folding=True)
        with open(os.path.join(directory, name + ".dims.json"), "w") as dims:
            json.dump({"input": list(example.shape)}, dims)
        with torch.inference_mode():
            output = module(example)
        numpy.save(os.path.join(directory, name + ".input.npy"), example.numpy())
        numpy.save(os.path.join(directory, name + ".torch_output.npy"), output.numpy())
        print(f"exported {path}")


if __name__ == "__main__":
    main()
