# SPDX-License-Identifier: Apache-2.0
"""Times PyTorch CPU inference of the benchmark models (the modules exported to ONNX).

Usage: python3 time_torch.py --threads N --iters N --warmup N MODEL...
  The benchmark models (models.MODELS) on their example input.
Usage: python3 time_torch.py --zoo [--batch B] --threads N --iters N --warmup N MODEL...
  The zoo models (models.ZOO), built as the zoo's export builds them (models.build_zoo), on
  models.zoo_input(MODEL, B).
Usage: python3 time_torch.py --zoo --serve --threads N
  Reads requests `MODEL BATCH ITERS WARMUP` from stdin, one a line, and answers each with one
  line; modules are built once and kept, so that interleaved rounds (scripts/bench_onnx --zoo)
  pay neither torch's start nor the build each round. An error answers `error model=NAME ...`.
Prints one line per model: `bench runtime=torch model=NAME threads=N iters=N min_ms=X median_ms=Y`.
"""
import argparse
import statistics
import sys
import time

import torch

from models import DYNAMIC_RUN_BATCH, build, build_zoo, zoo_input


def time_calls(module, example, iters, warmup):
    """(min, median) ms of `iters` calls after `warmup` untimed ones."""
    with torch.inference_mode():
        for _ in range(warmup):
            module(example)
        times_ms = []
        for _ in range(iters):
            start = time.perf_counter()
            module(example)
            times_ms.append((time.perf_counter() - start) * 1e3)
    return min(times_ms), statistics.median(times_ms)


def report(name, iters, min_ms, median_ms):
    print(f"bench runtime=torch model={name} threads={torch.get_num_threads()} "
          f"iters={iters} min_ms={min_ms:.3f} median_ms={median_ms:.3f}", flush=True)


def serve():
    """Answers timing requests from stdin (see the module's docstring)."""
    modules = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        name, batch, iters, warmup = line.split()
        try:
            if name not in modules:
                modules[name] = build_zoo(name)
            min_ms, median_ms = time_calls(modules[name], zoo_input(name, int(batch)),
                                           int(iters), int(warmup))
        except Exception as error:  # reported to the driver, which goes on with other models
            print(f"error model={name} {type(error).__name__}: {error}".replace("\n", " "),
                  flush=True)
            continue
        report(name, int(iters), min_ms, median_ms)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--zoo", action="store_true", help="the zoo's models (models.ZOO)")
    parser.add_argument("--batch", type=int, default=DYNAMIC_RUN_BATCH, help="zoo input entries")
    parser.add_argument("--serve", action="store_true", help="answer requests from stdin")
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.serve:
        if not args.zoo:
            parser.error("--serve times zoo models only")
        serve()
        return
    if not args.models:
        parser.error("no model named")
    for name in args.models:
        if args.zoo:
            module, example = build_zoo(name), zoo_input(name, args.batch)
        else:
            module, example = build(name)
        report(name, args.iters, *time_calls(module, example, args.iters, args.warmup))


if __name__ == "__main__":
    main()
