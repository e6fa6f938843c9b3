# SPDX-License-Identifier: Apache-2.0
"""Nodes built from Python record the user's file.py:line, through compilation and grad."""
import inspect
import os

import numpy as np

import tensorscope as ts
import tensorscope.tensor as T

HERE = os.path.basename(__file__)


def this_line():
    return f"{HERE}:{inspect.currentframe().f_back.f_lineno}"


def test_variables_record_the_calling_line():
    x = T.dmatrix("x"); x_line = this_line()  # noqa: E702 (same line on purpose)
    y = T.exp(x) + 1; y_line = this_line()  # noqa: E702
    assert x.creation_site == x_line
    assert y.creation_site == y_line
    assert y.user_op == "add"


def test_helpers_inside_the_package_report_their_caller():
    x = T.dvector("x")
    stacked = T.stack([x, x]); line = this_line()  # noqa: E702
    assert stacked.creation_site == line
    assert stacked.user_op == "stack"


def test_profile_rows_and_grad_nodes_point_at_user_lines():
    x = T.dmatrix("x")
    w = ts.shared(np.ones((3, 2)), "w")
    hidden = T.tanh(T.dot(x, w)); hidden_line = this_line()  # noqa: E702
    cost = T.sum(hidden); cost_line = this_line()  # noqa: E702
    gw = ts.grad(cost, w)
    assert gw.creation_site in (hidden_line, cost_line)
    assert gw.user_op.startswith("grad(")
    f = ts.function([x], cost, updates={w: w - 0.1 * gw}, profile=True)
    f(np.ones((4, 3)))
    rows = f.profile.apply_rows()
    sites = {row["source_site"] for row in rows}
    assert hidden_line in sites
    assert all(row["source_site"].startswith(HERE) for row in rows)
    assert any(row["user_op"].startswith("grad(") for row in rows)
    assert "created at " + hidden_line in f.profile.text() or hidden_line in sites


def test_function_name_defaults_to_its_line():
    x = T.dvector("x")
    f = ts.function([x], x + 1); line = this_line()  # noqa: E702
    assert f.name == line
    assert ts.function([x], x + 1, name="step").name == "step"
