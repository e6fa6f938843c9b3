# SPDX-License-Identifier: Apache-2.0
"""Runs the model zoo's cases (exported by `export_models.py --zoo DIR`) with `tscope run` and
compares each output with PyTorch's (check_outputs.compare: at most 1e-4 of max |output|).

Usage: python3 run_zoo.py --tscope PATH --cases DIR --expected FILE [--models a,b,...]
                          [--timeout S] [--table] [--write-expected FILE]
Prints one line per case,
  zoo model=NAME opset=N batch=B dynamic=yes|no status=S max_rel_error=E time_s=T reason=R
where S is pass, mismatch (ran, wrong answer), import-error (the model did not import),
fail (it imported but did not run: an error, a crash, the timeout) or export-error (torch could not
export it), then a summary. FILE lists the cases expected to pass, as `NAME opset=N batch=B`;
the exit status is 1 when one of them does not pass. A case that passes without being listed is
reported, for the list to be updated (--write-expected writes the passing cases). --table also
prints the results as the markdown table of docs/onnx.md, "Model zoo".
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

import numpy

from check_outputs import compare, read_float_tensor

STATUSES = ("pass", "mismatch", "import-error", "fail", "export-error")


def case_key(case):
    return f"{case['model']} opset={case['opset']} batch={case['batch']}"


def read_expected(path):
    with open(path) as lines:
        return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def error_line(stderr, returncode):
    """The first line of tscope's error message (`Unsupported: ...`), without the context chain
    that follows it."""
    for line in stderr.splitlines():
        if line.startswith("tscope: "):
            return line.removeprefix("tscope: ").removeprefix("error: ")
    lines = stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {returncode} without a message"


def run_case(case, directory, work, tscope, timeout):
    """(status, max relative error or None, reason) of one case."""
    stem = os.path.join(directory, case["id"])
    if os.path.exists(stem + ".export_error.txt"):
        with open(stem + ".export_error.txt") as error:
            return "export-error", None, error.readline().strip()
    if not os.path.exists(stem + ".onnx"):
        return "fail", None, "not exported"
    out = os.path.join(work, case["id"])
    os.makedirs(out, exist_ok=True)
    for stale in os.listdir(out):
        os.remove(os.path.join(out, stale))
    command = [tscope, "run", stem + ".onnx", "--input-data", f"input={stem}.input.npy",
               "--save", out]
    if case["dynamic"]:
        command += ["--input", "input=" + "x".join(map(str, case["input_dims"]))]
    try:
        result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "fail", None, f"timed out after {timeout} s"
    except OSError as error:  # tscope missing, or being relinked
        return "fail", None, f"cannot start {tscope}: {error}"
    with open(os.path.join(out, "stderr.txt"), "w") as log:
        log.write(result.stderr)
    if result.returncode < 0:
        return "fail", None, f"killed by signal {-result.returncode}"
    if result.returncode != 0:
        # The importer adds this context to every error it raises.
        status = "import-error" if "while importing ONNX model" in result.stderr else "fail"
        return status, None, error_line(result.stderr, result.returncode)
    ours = read_float_tensor(os.path.join(out, "output_0.pb"))
    reference = numpy.load(stem + ".torch_output.npy")
    if ours.shape != reference.shape:
        return "mismatch", None, f"shape {ours.shape} instead of {reference.shape}"
    error, scale, ok = compare(ours, reference)
    relative = error / scale if scale > 0 else error
    if ok:
        return "pass", relative, "-"
    return "mismatch", relative, f"max_abs_error={error:.3g} max_abs_value={scale:.3g}"


def cpu_name():
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def markdown_table(results):
    """The results as docs/onnx.md's table: one row per case, except that successive cases of a
    model that differ only in opset and error share a row (opsets 11-17, the largest error)."""
    passed = sum(result["status"] == "pass" for result in results)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    rows = []  # [first case, last opset, largest error, status, reason]
    for result in results:
        case = result["case"]
        previous = rows[-1] if rows else None
        if (previous and previous[0]["model"] == case["model"]
                and previous[0]["batch"] == case["batch"]
                and previous[0]["dynamic"] == case["dynamic"] and previous[1] + 1 == case["opset"]
                and previous[3] == result["status"] and previous[4] == result["reason"]):
            previous[1] = case["opset"]
            if result["error"] is not None:
                previous[2] = max(previous[2], result["error"])
            continue
        rows.append([case, case["opset"], result["error"], result["status"], result["reason"]])
    lines = [f"`scripts/test zoo --table`, {date}, {cpu_name()} ({os.cpu_count()} cores): "
             f"{passed} of {len(results)} cases pass.", "",
             "| Model | Opset | Batch | Status | Max rel. error | Reason |",
             "|---|---|---|---|---:|---|"]
    for case, last_opset, error, status, reason in rows:
        opsets = str(case["opset"])
        if last_opset != case["opset"]:
            opsets += f"-{last_opset}"
        batch = f"{case['batch']}, dynamic" if case["dynamic"] else str(case["batch"])
        error_text = "-" if error is None else f"{error:.1e}"
        reason_text = "" if status == "pass" else reason.replace("|", "\\|")
        lines.append(f"| {case['model']} | {opsets} | {batch} | {status} | {error_text} | "
                     f"{reason_text} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tscope", required=True)
    parser.add_argument("--cases", required=True, help="the directory export_models.py wrote")
    parser.add_argument("--expected", required=True)
    parser.add_argument("--models", default="", help="models to run (default: all)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per case")
    parser.add_argument("--work", help="where outputs and logs go (default: CASES/../runs)")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--write-expected")
    args = parser.parse_args()
    if args.write_expected and args.models:
        parser.error("--write-expected needs every model: it rewrites the whole list")
    work = args.work or os.path.join(os.path.dirname(os.path.abspath(args.cases)), "runs")
    with open(os.path.join(args.cases, "cases.json")) as manifest:
        cases = json.load(manifest)
    models = set(filter(None, args.models.split(",")))
    cases = [case for case in cases if not models or case["model"] in models]
    expected = read_expected(args.expected)

    start = time.perf_counter()
    results = []
    for case in cases:
        case_start = time.perf_counter()
        status, error, reason = run_case(case, args.cases, work, args.tscope, args.timeout)
        seconds = time.perf_counter() - case_start
        results.append({"case": case, "status": status, "error": error, "reason": reason})
        error_text = "-" if error is None else f"{error:.2g}"
        print(f"zoo model={case['model']} opset={case['opset']} batch={case['batch']} "
              f"dynamic={'yes' if case['dynamic'] else 'no'} status={status} "
              f"max_rel_error={error_text} time_s={seconds:.1f} reason={reason}", flush=True)
    seconds = time.perf_counter() - start

    counts = {status: sum(r["status"] == status for r in results) for status in STATUSES}
    print(f"zoo: {counts['pass']} of {len(results)} cases pass ("
          + ", ".join(f"{counts[s]} {s}" for s in STATUSES[1:] if counts[s])
          + f") in {seconds:.0f} s")
    regressions = [r for r in results if case_key(r["case"]) in expected and r["status"] != "pass"]
    newly = [r for r in results if case_key(r["case"]) not in expected and r["status"] == "pass"]
    for result in newly:
        print(f"zoo: passes but is not listed in {args.expected}: {case_key(result['case'])}")
    for result in regressions:
        print(f"zoo: REGRESSION {case_key(result['case'])} ({result['status']}: "
              f"{result['reason']})")
    known = {case_key(case) for case in cases}
    for key in sorted(expected - known) if not models else []:
        print(f"zoo: {args.expected} lists {key}, which is no zoo case")
    if args.write_expected:
        with open(args.write_expected, "w") as out:
            out.write("# Model zoo cases that pass (`scripts/test zoo`); the tier fails when one "
                      "stops passing.\n# Rewrite it with `scripts/test zoo --write-expected "
                      "tests/onnx/zoo_expected_pass.txt` and check\n# that the diff only adds "
                      "cases.\n")
            for result in results:
                if result["status"] == "pass":
                    out.write(case_key(result["case"]) + "\n")
    if args.table:
        print()
        print(markdown_table(results))
    if regressions:
        print(f"zoo: {len(regressions)} expected case(s) no longer pass")
        sys.exit(1)


if __name__ == "__main__":
    main()
