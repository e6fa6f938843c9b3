# SPDX-License-Identifier: Apache-2.0
"""The fixed cost of one Function call from Python, next to the same call from C++.

The graph is benchmarks/call_overhead_probe.cpp's: one multiply of two one-element float32
inputs, allow_gc off. Prints nanoseconds per call, the minimum over rounds, for Python (NumPy in
and out) and, given the probe binary, for C++ in the same run, and their difference.

    PYTHONPATH=build/release/python python3 benchmarks/python/call_overhead.py \
        [--probe build/release/benchmarks/tscope_call_overhead_probe] [--calls N] [--rounds R]
"""
import argparse
import subprocess
import time

import numpy as np

import tensorscope as ts
import tensorscope.tensor as T


def python_ns_per_call(calls, rounds):
    x = T.fvector("x")
    y = T.fvector("y")
    f = ts.function([x, y], x * y, allow_gc=False)
    a = np.zeros(1, dtype=np.float32)
    b = np.zeros(1, dtype=np.float32)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            f(a, b)
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


def cpp_ns_per_call(probe, calls, rounds):
    best = float("inf")
    for _ in range(rounds):
        done = subprocess.run([probe, str(calls), "0", "print"], check=True, capture_output=True,
                              text=True)
        best = min(best, float(done.stdout))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", help="the tscope_call_overhead_probe binary")
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    python_ns = python_ns_per_call(args.calls, args.rounds)
    print(f"python: {python_ns:.1f} ns per call")
    if args.probe:
        cpp_ns = cpp_ns_per_call(args.probe, args.calls, args.rounds)
        print(f"c++:    {cpp_ns:.1f} ns per call")
        print(f"python overhead: {python_ns - cpp_ns:.1f} ns per call")


if __name__ == "__main__":
    main()
