# SPDX-License-Identifier: Apache-2.0
"""The zoo speed run (`scripts/bench_onnx --zoo`, docs/onnx.md, "Speed"): times every zoo model's
main case (models.zoo_cases(): dynamic batch axis, run with DYNAMIC_RUN_BATCH entries) in
Tensorscope (`tscope bench`), PyTorch (time_torch.py --serve) and ONNX Runtime (time_ort.js), in
interleaved rounds at each thread count, and prints tables of medians, ratios and peak RSS.

Usage: python3 bench_zoo.py --tscope PATH --cases DIR --node-modules DIR --work DIR
                            [--threads 1,2] [--rounds R] [--iters I] [--models a,b,...]
                            [--command TEXT]
DIR (--cases) is what `export_models.py --zoo` wrote (cases.json and the exported files). Each
model's output in `tscope run` is first compared with PyTorch's (run_zoo.run_case); a model that
does not pass is reported and not timed. Raw lines (the calibrating runs, then every timed run)
go to WORK/results-<N>threads.txt.
"""
import argparse
import datetime
import importlib.metadata
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from run_zoo import cpu_name, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIMES = ("tscope", "torch", "ort")
RUN_SECONDS = 0.5  # timed calls per run, without --iters: about this long
MIN_ITERS, MAX_ITERS = 3, 20000
SLOW_CALL_MS = 100  # slower calls get one warm-up call instead of three
RUN_TIMEOUT_S = 900


class RunError(Exception):
    pass


def parse_bench_line(text, runtime):
    """The fields of the `bench runtime=RUNTIME ...` line in `text`."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == "bench" and f"runtime={runtime}" in words:
            return dict(word.split("=", 1) for word in words[1:])
    raise RunError(f"no result line in: {text.strip()[-500:]}")


def run_process(command, env, measure_rss=False):
    """(stdout, seconds, peak RSS in KiB or None) of a command that must succeed. The peak RSS is
    what `/usr/bin/time -f %M` reports (the kernel's ru_maxrss). It is measured through that small
    process because a direct child of this one starts from a copy of this interpreter's memory,
    which its ru_maxrss would count."""
    with tempfile.NamedTemporaryFile("r") as rss_file:
        if measure_rss:
            command = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name] + command
        start = time.perf_counter()
        try:
            result = subprocess.run(command, capture_output=True, text=True, env=env,
                                    timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RunError(f"timed out after {RUN_TIMEOUT_S} s") from None
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            raise RunError(f"exit status {result.returncode}: {result.stderr.strip()[-2000:]}")
        rss_kib = int(rss_file.read().split()[-1]) if measure_rss else None
    return result.stdout, seconds, rss_kib


class TorchWorker:
    """time_torch.py --zoo --serve at one thread count, with OMP_NUM_THREADS set to it."""

    def __init__(self, python, threads, log_path):
        self.command = [python, os.path.join(HERE, "time_torch.py"), "--zoo", "--serve",
                        "--threads", str(threads)]
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        self.log = open(log_path, "a")
        self.process = None

    def time(self, model, batch, iters, warmup):
        if self.process is None or self.process.poll() is not None:  # first, or after a crash
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=self.log, text=True,
                                            env=self.env, cwd=HERE)
        start = time.perf_counter()
        self.process.stdin.write(f"{model} {batch} {iters} {warmup}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RunError(f"time_torch.py ended (exit status {self.process.wait()}); "
                           f"see {self.log.name}")
        if answer.startswith("error"):
            raise RunError(answer.strip())
        return parse_bench_line(answer, "torch"), time.perf_counter() - start, None

    def close(self):
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()
        self.log.close()


class Bench:
    """Runs one runtime on one case at one thread count: `run(runtime, case, iters, warmup)`
    returns (bench line fields, seconds, peak RSS in KiB or None: measured on request, for
    Tensorscope and ONNX Runtime)."""

    def __init__(self, args, threads):
        self.args = args
        self.threads = threads
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        self.ort_env = dict(self.env, NODE_PATH=args.node_modules)
        self.torch = TorchWorker(sys.executable, threads,
                                 os.path.join(args.work, f"torch-{threads}threads.log"))

    def run(self, runtime, case, iters, warmup, measure_rss=False):
        onnx = os.path.join(self.args.cases, case["id"] + ".onnx")
        dims = "input=" + "x".join(map(str, case["input_dims"]))
        counts = ["--threads", str(self.threads), "--iters", str(iters), "--warmup", str(warmup)]
        if runtime == "tscope":
            out, seconds, rss = run_process(
                [self.args.tscope, "bench", onnx, "--input", dims] + counts, self.env, measure_rss)
        elif runtime == "ort":
            out, seconds, rss = run_process(
                ["node", os.path.join(HERE, "time_ort.js"), "--input", dims] + counts + [onnx],
                self.ort_env, measure_rss)
        else:
            return self.torch.time(case["model"], case["batch"], iters, warmup)
        return parse_bench_line(out, runtime), seconds, rss

    def close(self):
        self.torch.close()


def load_cases(directory, models):
    """The main case (dynamic batch) of every zoo model, or of `models`, from cases.json."""
    with open(os.path.join(directory, "cases.json")) as manifest:
        cases = [case for case in json.load(manifest) if case["dynamic"]]
    unknown = models - {case["model"] for case in cases}
    if unknown:
        raise SystemExit(f"bench_zoo: no zoo model named {', '.join(sorted(unknown))}")
    return [case for case in cases if not models or case["model"] in models]


def check_cases(cases, args):
    """The cases whose `tscope run` output matches PyTorch's, and `model (status: reason)` of
    the others, which are reported."""
    passing, skipped = [], []
    for case in cases:
        status, error, reason = run_case(case, args.cases, os.path.join(args.work, "check"),
                                         args.tscope, timeout=RUN_TIMEOUT_S)
        error_text = "-" if error is None else f"{error:.2g}"
        print(f"check model={case['model']} status={status} max_rel_error={error_text}"
              + ("" if status == "pass" else f" reason={reason}; not timed"), flush=True)
        if status == "pass":
            passing.append(case)
        else:
            skipped.append(f"{case['model']} ({status}: {reason})")
    return passing, skipped


def report_failure(results, runtime, model, error):
    """A runtime that fails on a model is reported, and its run left out of the table."""
    print(f"bench_zoo: {runtime} failed on {model}: {error}", file=sys.stderr, flush=True)
    results["failures"] += 1


def choose_counts(median_ms, fixed_iters):
    """(iters, warmup) of a runtime whose call takes about `median_ms`."""
    warmup = 3 if median_ms < SLOW_CALL_MS else 1
    if fixed_iters:
        return fixed_iters, warmup
    iters = round(RUN_SECONDS * 1e3 / max(median_ms, 1e-3))
    return min(max(iters, MIN_ITERS), MAX_ITERS), warmup


def calibrate(bench, cases, args, results, raw):
    """A short run (1 warm-up call, 2 timed) of every runtime on every case: its peak RSS goes
    into `results`, and its time sets the calls of the timed runs; a line per run goes to `raw`.
    Returns {(model, runtime): (iters, warmup)} and an estimate of the seconds one round
    takes."""
    counts, round_s = {}, 0.0
    for case in cases:
        model = case["model"]
        for runtime in RUNTIMES:
            try:
                fields, seconds, rss = bench.run(runtime, case, iters=2, warmup=1,
                                                 measure_rss=True)
            except RunError as error:
                report_failure(results, runtime, model, error)
                continue
            median_ms = float(fields["median_ms"])
            counts[(model, runtime)] = choose_counts(median_ms, args.iters)
            if rss is not None:
                results["rss_kib"][(bench.threads, model, runtime)] = rss
            iters, warmup = counts[(model, runtime)]
            # A process's fixed costs (start, import, compile; the torch worker builds a module
            # once only) plus the calls of a timed run.
            fixed_s = 0 if runtime == "torch" else seconds - 3 * median_ms / 1e3
            round_s += fixed_s + (iters + warmup) * median_ms / 1e3
            raw.write(f"calibrate runtime={runtime} model={model} threads={bench.threads} "
                      f"median_ms={median_ms} process_s={seconds:.2f} peak_rss_kib={rss} "
                      f"then_iters={iters} then_warmup={warmup}\n")
    return counts, round_s


def time_rounds(bench, cases, counts, args, results, raw):
    for round_index in range(args.rounds):
        start = time.perf_counter()
        for case in cases:
            model = case["model"]
            for runtime in RUNTIMES:
                if (model, runtime) not in counts:
                    continue
                iters, warmup = counts[(model, runtime)]
                try:
                    fields, _, _ = bench.run(runtime, case, iters, warmup)
                except RunError as error:
                    report_failure(results, runtime, model, error)
                    continue
                median_ms = float(fields["median_ms"])
                results["ms"][(bench.threads, model, runtime)][round_index] = median_ms
                raw.write(f"bench round={round_index + 1} runtime={runtime} model={model} "
                          f"threads={bench.threads} iters={iters} warmup={warmup} "
                          f"min_ms={fields['min_ms']} median_ms={median_ms}\n")
                raw.flush()
        print(f"threads {bench.threads}: round {round_index + 1} of {args.rounds} took "
              f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)


def round_ratios(results, threads, model, numerator, denominator):
    """The ratio numerator / denominator within each round where both ran."""
    a = results["ms"][(threads, model, numerator)]
    b = results["ms"][(threads, model, denominator)]
    return [x / y for x, y in zip(a, b) if x is not None and y is not None]


def summarise(results, threads, cases):
    """One row per model: medians, round ratios and RSS; and the geometric means."""
    rows = []
    for case in cases:
        model = case["model"]
        row = {"model": model}
        for runtime in RUNTIMES:
            values = [v for v in results["ms"][(threads, model, runtime)] if v is not None]
            row[runtime] = statistics.median(values) if values else None
            row["rss_" + runtime] = results["rss_kib"].get((threads, model, runtime))
        for other in ("ort", "torch"):
            ratios = round_ratios(results, threads, model, "tscope", other)
            row["vs_" + other] = statistics.median(ratios) if ratios else None
            row["range_" + other] = (min(ratios), max(ratios)) if ratios else None
        rows.append(row)
    means = {}
    for other in ("ort", "torch"):
        ratios = [row["vs_" + other] for row in rows if row["vs_" + other] is not None]
        means[other] = (math.exp(statistics.fmean(map(math.log, ratios))) if ratios else None,
                        len(ratios), sum(r <= 1.0 for r in ratios))
    return rows, means


def cell(value, spec):
    return "-" if value is None else format(value, spec)


def ms_cell(value):
    """Three significant digits, or whole milliseconds from 100 on."""
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 99.5 else f"{value:#.3g}"


def rss_cell(row):
    """Peak RSS in MiB, Tensorscope / ONNX Runtime."""
    kib = (row["rss_tscope"], row["rss_ort"])
    return " / ".join("-" if value is None else f"{value / 1024:.0f}" for value in kib)


def range_cell(row, other):
    bounds = row["range_" + other]
    return "-" if bounds is None else f"{bounds[0]:.2f}-{bounds[1]:.2f}"


def mean_line(means, threads):
    mean, count, at_most_one = means["ort"]
    torch_mean = means["torch"][0]
    return (f"{threads} thread{'s' if threads > 1 else ''}: geometric mean of tscope/ort "
            f"{cell(mean, '.2f')} over {count} models, {at_most_one} at or below 1.0; "
            f"of tscope/torch {cell(torch_mean, '.2f')}")


def print_table(rows, means, threads, args):
    print(f"\n{threads} thread(s): ms per inference, median over {args.rounds} interleaved rounds; "
          f"ratios: median (range) over rounds of the ratio within a round; "
          f"peak RSS of a short run, MiB")
    print(f"{'model':<22}{'tscope':>9}{'torch':>9}{'ort':>9}{'tscope/ort (range)':>22}"
          f"{'tscope/torch':>14}{'RSS tscope/ort':>18}")
    for row in rows:
        vs_ort = f"{cell(row['vs_ort'], '.2f')} ({range_cell(row, 'ort')})"
        print(f"{row['model']:<22}" + "".join(f"{ms_cell(row[r]):>9}" for r in RUNTIMES)
              + f"{vs_ort:>22}{cell(row['vs_torch'], '.2f'):>14}{rss_cell(row):>18}")
    print(mean_line(means, threads))


def tscope_release(path):
    """`tscope --version` on one line, without the commit: the docs' tables name the release."""
    tscope = subprocess.run([path, "--version"], capture_output=True, text=True)
    version = ", ".join(tscope.stdout.strip().splitlines()) or "unknown"
    return re.sub(r" \(commit [0-9a-f]+(-dirty)?\)", "", version.removeprefix("tscope "))


def versions(args):
    tscope_version = tscope_release(args.tscope)
    package = os.path.join(args.node_modules, "onnxruntime-node", "package.json")
    with open(package) as manifest:
        ort_version = json.load(manifest)["version"]
    torch_version = importlib.metadata.version("torch")
    return (f"Tensorscope {tscope_version}; PyTorch {torch_version}; "
            f"ONNX Runtime {ort_version} (onnxruntime-node, CPU, graph optimisation level all, "
            f"intra-op threads = thread count)")


def print_markdown(tables, skipped, args):
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    print(f"\n`{args.command}`, {date}, {cpu_name()} ({os.cpu_count()} cores); {versions(args)}. "
          f"Milliseconds per inference at batch 2, median over {args.rounds} interleaved rounds; "
          f"ratios are the median over rounds of the ratio within a round (its range after it); "
          f"peak RSS of a short run of each process, MiB.")
    if skipped:
        print(f"\nNot timed, their output differs from PyTorch's or they do not run: "
              f"{'; '.join(skipped)}.".replace("|", "\\|"))
    for threads, (rows, means) in tables.items():
        print(f"\n{mean_line(means, threads)}.\n")
        print("| Model | Tensorscope | PyTorch | ONNX Runtime | Tensorscope / ORT | Range "
              "| Tensorscope / PyTorch | Peak RSS MiB, Tensorscope / ORT |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows:
            print(f"| {row['model']} | " + " | ".join(ms_cell(row[r]) for r in RUNTIMES)
                  + f" | {cell(row['vs_ort'], '.2f')} | {range_cell(row, 'ort')} | "
                  f"{cell(row['vs_torch'], '.2f')} | {rss_cell(row)} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tscope", required=True)
    parser.add_argument("--cases", required=True, help="the directory export_models.py wrote")
    parser.add_argument("--node-modules", required=True, help="holds onnxruntime-node")
    parser.add_argument("--work", required=True, help="where raw results and logs go")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, help="timed calls per run (default: calibrated)")
    parser.add_argument("--models", default="", help="models to time (default: all)")
    parser.add_argument("--command", default="scripts/bench_onnx --zoo",
                        help="the command line the markdown header names")
    args = parser.parse_args()
    args.node_modules = os.path.abspath(args.node_modules)
    os.makedirs(args.work, exist_ok=True)
    thread_counts = [int(n) for n in args.threads.split(",")]
    start = time.perf_counter()

    selected = load_cases(args.cases, set(filter(None, args.models.split(","))))
    cases, skipped = check_cases(selected, args)
    results = {"ms": {}, "rss_kib": {}, "failures": len(skipped)}
    tables = {}
    for threads in thread_counts:
        for case in cases:
            for runtime in RUNTIMES:
                results["ms"][(threads, case["model"], runtime)] = [None] * args.rounds
        bench = Bench(args, threads)
        try:
            with open(os.path.join(args.work, f"results-{threads}threads.txt"), "w") as raw:
                counts, round_s = calibrate(bench, cases, args, results, raw)
                print(f"threads {threads}: calibrated; a round should take about {round_s:.0f} s",
                      file=sys.stderr, flush=True)
                time_rounds(bench, cases, counts, args, results, raw)
        finally:
            bench.close()
        tables[threads] = summarise(results, threads, cases)
        print_table(*tables[threads], threads, args)
    print_markdown(tables, skipped, args)
    print(f"\nbench_zoo: {len(cases)} models, threads {args.threads}, {args.rounds} rounds, "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    if results["failures"]:
        print(f"bench_zoo: {results['failures']} failure(s), reported above", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
