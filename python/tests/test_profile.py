# SPDX-License-Identifier: Apache-2.0
"""Profiles as Python objects: the same text as the C++ renderer, JSON round trips, rows as
dicts, shared ProfileStats and the flag that prints every profile at exit."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T


def profiled_mlp(profile=True):
    x = T.fmatrix("x")
    w = ts.shared(np.full((8, 4), 0.1, dtype=np.float32), "w")
    b = ts.shared(np.zeros(4, dtype=np.float32), "b")
    cost = T.mean(T.nnet.softmax(T.dot(x, w) + b))
    gw, gb = ts.grad(cost, [w, b])
    train = ts.function([x], cost, updates={w: w - 0.1 * gw, b: b - 0.1 * gb}, name="train",
                        profile=profile)
    for _ in range(3):
        train(np.ones((5, 8), dtype=np.float32))
    return train


def test_summary_prints_the_text_report(capsys):
    train = profiled_mlp()
    train.profile.summary()
    printed = capsys.readouterr().out
    snapshot = train.profile.snapshot()  # a later snapshot: only "Time since load" may differ
    snapshot.summary()
    assert capsys.readouterr().out == snapshot.text()
    assert len(printed.splitlines()) == len(snapshot.text().splitlines())
    for heading in ("Function profiling", "Message: train", "Class\n---", "Ops\n---",
                    "Apply\n------"):
        assert heading in printed
    assert "Time in 3 calls to Function.__call__" in printed


def test_text_is_what_the_cpp_renderer_prints(tmp_path):
    cli = os.environ.get("TSCOPE_CLI")
    if not cli:
        pytest.skip("TSCOPE_CLI (the tscope binary) is set by CTest")
    train = profiled_mlp()
    snapshot = train.profile.snapshot()
    path = tmp_path / "train.json"
    path.write_text(snapshot.to_json())
    rendered = subprocess.run([cli, "report", str(path)], check=True, capture_output=True,
                              text=True).stdout
    assert rendered == snapshot.text()


def test_json_round_trip_and_rows(tmp_path):
    train = profiled_mlp()
    path = tmp_path / "p.json"
    train.profile.to_json(str(path))
    loaded = ts.profile.load(str(path))
    assert loaded.text() == ts.profile.load(str(path)).text()
    assert loaded.apply_rows() == [dict(row) for row in loaded.apply_rows()]
    rows = loaded.apply_rows()
    assert rows and all(row["calls"] == 3 for row in rows)
    assert {"apply", "op", "op_class", "impl", "total_ns", "source_site", "user_op", "inputs",
            "outputs"} <= set(rows[0])
    assert loaded.function_rows()[0]["calls"] == 3
    with pytest.raises(ts.ParseError):
        bad = tmp_path / "bad.json"
        bad.write_text("{}")
        ts.profile.load(str(bad))
    with pytest.raises(ts.IoError):
        ts.profile.load(str(tmp_path / "missing.json"))


def test_shared_profile_stats_sum_functions():
    stats = ts.ProfileStats()
    x = T.dvector("x")
    f = ts.function([x], T.exp(x), profile=stats)
    g = ts.function([x], T.log(x), profile=stats)
    f(np.ones(3))
    g(np.ones(3))
    g(np.ones(3))
    calls = sorted(row["calls"] for row in stats.function_rows())
    assert calls == [1, 2]
    assert f.profile.collector is stats.collector


def test_unprofiled_function_has_no_profile():
    x = T.dvector("x")
    assert ts.function([x], x + 1).profile is None


SCRIPT = textwrap.dedent("""
    import numpy as np
    import tensorscope as ts
    import tensorscope.tensor as T
    {setup}
    x = T.dvector("x")
    f = ts.function([x], T.exp(x) * 2)
    f(np.ones(3))
    print("config.profile", ts.config.profile)
""")


def run_script(tmp_path, setup, flags):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(setup=setup))
    env = dict(os.environ, TSCOPE_FLAGS=flags)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          check=True, timeout=120)


def test_config_profile_prints_every_profile_at_exit(tmp_path):
    done = run_script(tmp_path, "ts.config.profile = True; ts.config.profiling.destination = "
                      "'stdout'", "")
    assert "config.profile True" in done.stdout
    assert "Function profiling" in done.stdout
    assert "Message: user_script.py:7" in done.stdout


def test_tscope_flags_environment_sets_config(tmp_path):
    done = run_script(tmp_path, "", "profile=true")
    assert "config.profile True" in done.stdout
    assert "Function profiling" in done.stderr
    assert "user_script.py:7" in done.stderr


LOOP_SCRIPT = textwrap.dedent("""\
    import time
    import numpy as np
    import tensorscope as ts
    import tensorscope.tensor as T
    x = T.dvector("x")
    step = ts.function([x], T.exp(x) * 2, name="train_step")

    @ts.profile.zone("voxelize")
    def voxelize():
        time.sleep(0.02)
        return np.ones(3)

    for epoch in range(2):
        ts.profile.mark_epoch(epoch)
        for _ in range(3):
            with ts.profile.input_wait("next batch"):
                batch = voxelize()
            with ts.profile.zone("train step"):
                step(batch)
            ts.profile.mark_step(8)
""")


def test_zones_steps_and_epochs_from_python(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(LOOP_SCRIPT)
    env = dict(os.environ, TSCOPE_FLAGS="profile=true,profiling.destination=stdout")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          check=True, timeout=120)
    out = done.stdout
    assert out.startswith("Input pipeline\n"), out
    assert "Verdict: HIGHLY input-bound" in out
    assert "Steps: 6," in out
    assert "Data side, by tottime: voxelize (user_script.py:17)" in out
    assert "next batch (user_script.py:16)" in out
    assert "train_step (graph function)" in out
    assert "Epochs and steps" in out
    assert "First epoch against the others" in out


POOL_SCRIPT = textwrap.dedent("""\
    import multiprocessing as mp
    import sys
    import tensorscope as ts

    def work(n):
        with ts.profile.zone("child work"):
            return sum(range(1000 * (n + 1)))

    if __name__ == "__main__":
        with ts.profile.zone("parent"):
            with mp.get_context(sys.argv[1]).Pool(2) as pool:
                print(pool.map(work, range(4)))
""")


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_multiprocessing_workers_are_merged(tmp_path, method):
    script = tmp_path / "pool_script.py"
    script.write_text(POOL_SCRIPT)
    report = tmp_path / "report.txt"
    env = dict(os.environ, TSCOPE_FLAGS=f"profile=true,profiling.destination={report}")
    subprocess.run([sys.executable, str(script), method], capture_output=True, text=True,
                   env=env, check=True, timeout=120)
    text = report.read_text()
    # A pool worker that got no task may have recorded nothing; none may be missing.
    assert " merged)" in text and "missing" not in text, text
    rows = [line for line in text.splitlines() if line.endswith("child work (pool_script.py:6)")]
    assert rows and rows[0].split()[0] == "4", text
