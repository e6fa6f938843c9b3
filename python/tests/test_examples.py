# SPDX-License-Identifier: Apache-2.0
"""The Python ports of the C++ examples run, learn, and profile their own lines."""
import os
import re
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


@pytest.mark.parametrize("example, steps", [("logistic_regression.py", 20), ("mlp.py", 6)])
def test_example_loss_falls_and_profile_names_its_lines(example, steps):
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, example), str(steps)],
                          check=True, capture_output=True, text=True, timeout=300)
    losses = [float(value) for value in re.findall(r"^step \d+ loss (\S+)$", done.stdout, re.M)]
    assert len(losses) == steps
    assert losses[-1] < 0.8 * losses[0]
    assert "Function profiling" in done.stdout
    assert f"created at {example}:" in done.stdout or f"{example}:" in done.stdout
