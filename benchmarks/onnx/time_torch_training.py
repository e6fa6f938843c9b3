# SPDX-License-Identifier: Apache-2.0
"""Times PyTorch CPU training steps of a training-comparison model (training_models.py).

Usage: python3 time_torch_training.py --threads N --iters N --warmup N MODEL
Prints `bench runtime=torch model=NAME threads=N iters=N min_ms=X median_ms=Y`, as `tscope bench`
does. The process does nothing else, so that its peak RSS (measured from outside) is that of the
steps plus the interpreter and torch.
"""
import argparse
import statistics
import time

import torch

import training_models


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("model", choices=sorted(training_models.MODELS))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    module, batch, labels = training_models.build(args.model)
    opt = training_models.optimizer(module)
    for _ in range(args.warmup):
        training_models.step(module, opt, batch, labels)
    times_ms = []
    for _ in range(args.iters):
        start = time.perf_counter()
        training_models.step(module, opt, batch, labels)
        times_ms.append((time.perf_counter() - start) * 1e3)
    print(f"bench runtime=torch model={args.model} threads={args.threads} iters={args.iters} "
          f"min_ms={min(times_ms):.3f} median_ms={statistics.median(times_ms):.3f}", flush=True)


if __name__ == "__main__":
    main()
