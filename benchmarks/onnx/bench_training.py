# SPDX-License-Identifier: Apache-2.0
"""The training-step comparison (scripts/bench_training, docs/onnx.md, "Training speed"): one
SGD-with-momentum step (forward, softmax cross-entropy, backward, update) of each model of
training_models.py in Tensorscope (`tscope bench --train`) and PyTorch (time_torch_training.py),
in interleaved rounds at each thread count, with each process's peak RSS; first checks that one
step of each gives PyTorch's weights (check_training_models.py).

Usage: python3 bench_training.py --tscope PATH --work DIR [--threads 1,2] [--rounds R]
                                 [--models a,b,...] [--command TEXT]
Raw lines go to WORK/results.txt.
"""
import argparse
import datetime
import importlib.metadata
import os
import statistics
import subprocess
import sys
import time

import training_models
from bench_zoo import RunError, parse_bench_line, run_process, tscope_release
from run_zoo import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIMES = ("tscope", "torch")
# Timed steps per run (after one untimed step): a run lasts a second or more.
ITERS = {"mlp": 100, "resnet18": 3, "lstm": 30}


def export(names, work):
    for name in names:
        module, batch, _ = training_models.build(name)
        training_models.export(module, batch, os.path.join(work, name + ".onnx"))


def command_of(runtime, name, threads, args):
    counts = ["--threads", str(threads), "--iters", str(ITERS[name]), "--warmup", "1"]
    if runtime == "tscope":
        return [args.tscope, "bench", os.path.join(args.work, name + ".onnx"), "--train",
                "--loss", "xent", "--lr", str(training_models.LEARNING_RATE),
                "--momentum", str(training_models.MOMENTUM)] + counts
    return [sys.executable, os.path.join(HERE, "time_torch_training.py")] + counts + [name]


def idle_rss_kib(args):
    """Peak RSS of each runtime's process doing nothing: `tscope --version`, and the interpreter
    importing torch and torchvision, as time_torch_training.py does."""
    tscope = run_process([args.tscope, "--version"], os.environ, measure_rss=True)[2]
    torch = run_process([sys.executable, "-c", "import torch, torchvision"], os.environ,
                        measure_rss=True)[2]
    return {"tscope": tscope, "torch": torch}


def time_rounds(names, threads, args, raw):
    """{(model, runtime): ([median ms per round], [peak RSS KiB per round])}."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    results = {(name, runtime): ([], []) for name in names for runtime in RUNTIMES}
    for round_index in range(args.rounds):
        start = time.perf_counter()
        for name in names:
            for runtime in RUNTIMES:
                out, _, rss = run_process(command_of(runtime, name, threads, args), env,
                                          measure_rss=True)
                fields = parse_bench_line(out, runtime)
                results[(name, runtime)][0].append(float(fields["median_ms"]))
                results[(name, runtime)][1].append(rss)
                raw.write(f"bench round={round_index + 1} runtime={runtime} model={name} "
                          f"threads={threads} iters={ITERS[name]} min_ms={fields['min_ms']} "
                          f"median_ms={fields['median_ms']} peak_rss_kib={rss}\n")
                raw.flush()
        print(f"threads {threads}: round {round_index + 1} of {args.rounds} took "
              f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return results


def summarise(results, names):
    rows = []
    for name in names:
        row = {"model": name}
        for runtime in RUNTIMES:
            times, rss = results[(name, runtime)]
            row[runtime] = statistics.median(times)
            row["rss_" + runtime] = statistics.median(rss) / 1024
        ratios = [a / b for a, b in zip(results[(name, "tscope")][0], results[(name, "torch")][0])]
        row["ratio"] = statistics.median(ratios)
        row["range"] = (min(ratios), max(ratios))
        rows.append(row)
    return rows


def ms_cell(value):
    return f"{value:.0f}" if value >= 99.5 else f"{value:#.3g}"


def markdown(tables, idle, checks, args):
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    version = tscope_release(args.tscope)
    lines = [
        f"`{args.command}`, {date}, {cpu_name()} ({os.cpu_count()} cores); Tensorscope "
        f"{version}; PyTorch {importlib.metadata.version('torch')}. Milliseconds per training "
        f"step (median of a run's steps, then the median over {args.rounds} interleaved rounds); "
        f"the ratio is the median over rounds of the ratio within a round (its range after it). "
        f"Peak RSS of the process that runs the steps, MiB; an idle process peaks at "
        f"{idle['tscope'] / 1024:.0f} MiB (`tscope --version`) and "
        f"{idle['torch'] / 1024:.0f} MiB (Python importing torch and torchvision).",
        "", "One step's weights against PyTorch's float64 step (largest error, as a fraction of "
        "the step): " + "; ".join(checks) + ".", "",
        "| Model | Threads | Tensorscope ms | PyTorch ms | Tensorscope / PyTorch | Range "
        "| Peak RSS MiB, Tensorscope / PyTorch |",
        "|---|---:|---:|---:|---:|---:|---:|"]
    for threads, rows in tables.items():
        for row in rows:
            lines.append(f"| {row['model']} | {threads} | {ms_cell(row['tscope'])} | "
                         f"{ms_cell(row['torch'])} | {row['ratio']:.2f} | "
                         f"{row['range'][0]:.2f}-{row['range'][1]:.2f} | "
                         f"{row['rss_tscope']:.0f} / {row['rss_torch']:.0f} |")
    return "\n".join(lines)


def run_checks(names, args):
    """`model max_step_error` of each model; exits when one does not match."""
    check = subprocess.run([sys.executable, os.path.join(HERE, "check_training_models.py"),
                            "--tscope", args.tscope, "--work", os.path.join(args.work, "check"),
                            "--models", ",".join(names)], capture_output=True, text=True)
    lines = [line for line in check.stdout.splitlines() if line.startswith("check ")]
    print("\n".join(lines), flush=True)
    if check.returncode != 0:
        print(check.stderr[-3000:], file=sys.stderr)
        raise SystemExit("bench_training: a training step does not match PyTorch's")
    fields = [dict(word.split("=", 1) for word in line.split()[1:]) for line in lines]
    return [f"{f['model']} {float(f['max_step_error']):.1e} (PyTorch float32: "
            f"{float(f['torch_float32_max_step_error']):.1e})" for f in fields]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tscope", required=True)
    parser.add_argument("--work", required=True, help="exports, raw results and checks go here")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default=",".join(training_models.MODELS))
    parser.add_argument("--command", default="scripts/bench_training")
    args = parser.parse_args()
    names = args.models.split(",")
    unknown = set(names) - set(training_models.MODELS)
    if unknown:
        raise SystemExit(f"bench_training: no model named {', '.join(sorted(unknown))}")
    os.makedirs(args.work, exist_ok=True)
    checks = run_checks(names, args)
    export(names, args.work)
    idle = idle_rss_kib(args)
    tables = {}
    with open(os.path.join(args.work, "results.txt"), "w") as raw:
        for threads in (int(n) for n in args.threads.split(",")):
            try:
                results = time_rounds(names, threads, args, raw)
            except RunError as error:
                raise SystemExit(f"bench_training: {error}") from None
            tables[threads] = summarise(results, names)
            for row in tables[threads]:
                print(f"threads={threads} model={row['model']} tscope_ms={row['tscope']:.3f} "
                      f"torch_ms={row['torch']:.3f} ratio={row['ratio']:.2f} "
                      f"rss_mib={row['rss_tscope']:.0f}/{row['rss_torch']:.0f}", flush=True)
    print()
    print(markdown(tables, idle, checks, args))


if __name__ == "__main__":
    main()
