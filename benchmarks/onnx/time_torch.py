# SPDX-License-Identifier: Apache-2.0
"""Times PyTorch CPU inference of the benchmark models (the modules exported to ONNX).

Usage: python3 time_torch.py --threads N --iters N --warmup N MODEL...
Prints one line per model: `bench runtime=torch model=NAME threads=N iters=N min_ms=X median_ms=Y`.
"""
import argparse
import statistics
import time

import torch

from models import build


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.models:
        module, example = build(name)
        with torch.inference_mode():
            for _ in range(args.warmup):
                module(example)
            times_ms = []
            for _ in range(args.iters):
                start = time.perf_counter()
                module(example)
                times_ms.append((time.perf_counter() - start) * 1e3)
        print(f"bench runtime=torch model={name} threads={torch.get_num_threads()} "
              f"iters={args.iters} min_ms={min(times_ms):.3f} "
              f"median_ms={statistics.median(times_ms):.3f}", flush=True)


if __name__ == "__main__":
    main()
