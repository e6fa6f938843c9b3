# SPDX-License-Identifier: Apache-2.0
"""Checks Tensorscope's answer against PyTorch's for one benchmark model, so that the speed
comparison compares runs that compute the same thing. The zoo tier (run_zoo.py) uses the same
reader and rule.

Usage: python3 check_outputs.py NAME TSCOPE_OUTPUT.pb TORCH_OUTPUT.npy
Prints `check model=NAME max_abs_error=E max_abs_value=V ok=yes|no` and exits 1 when
|tscope - torch| exceeds 1e-4 * max |torch| anywhere. The .pb is the TensorProto that
`tscope run --save` writes (float32, raw_data or float_data), read without the onnx package.
"""
import sys

import numpy


def varint(data, i):
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def read_float_tensor(path):
    data = open(path, "rb").read()
    i, dims, values = 0, [], None
    while i < len(data):
        key, i = varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:  # varint: an unpacked dim, or data_type
            value, i = varint(data, i)
            if field == 1:
                dims.append(value)
        elif wire == 2:  # length-delimited: packed dims, float_data, raw_data, name
            length, i = varint(data, i)
            chunk, i = data[i:i + length], i + length
            if field == 1:
                j = 0
                while j < len(chunk):
                    value, j = varint(chunk, j)
                    dims.append(value)
            elif field in (4, 9):
                values = numpy.frombuffer(chunk, dtype="<f4")
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
    if values is None:
        raise SystemExit(f"{path}: no float32 data")
    return values.reshape(dims)


def compare(ours, reference):
    """(max |ours - reference|, max |reference|, whether the first is at most 1e-4 of the
    second); the arrays have the same shape."""
    error = float(numpy.abs(ours - reference).max())
    scale = float(numpy.abs(reference).max())
    # Relative to the output's size only: random-weight MobileNet-v2's outputs are around 1e-9.
    # A NaN anywhere makes the error NaN, which is no pass.
    return error, scale, bool(error <= 1e-4 * scale)


def main():
    name, ours_path, torch_path = sys.argv[1:4]
    ours = read_float_tensor(ours_path)
    reference = numpy.load(torch_path)
    if ours.shape != reference.shape:
        print(f"check model={name} shape {ours.shape} instead of {reference.shape} ok=no")
        sys.exit(1)
    error, scale, ok = compare(ours, reference)
    print(f"check model={name} max_abs_error={error:.3g} max_abs_value={scale:.3g} "
          f"ok={'yes' if ok else 'no'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
