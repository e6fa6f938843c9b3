# SPDX-License-Identifier: Apache-2.0
"""ts.scan: Theano's signature, NumPy results, gradients through the loop, and the loop's own
profile section pointing at this file's lines."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T


def test_cumulative_sum_matches_numpy():
    x = T.dvector("x")
    outputs, updates = ts.scan(lambda x_t, total: total + x_t, sequences=x,
                               outputs_info=T.constant(0.0))
    assert updates == {}
    f = ts.function([x], outputs)
    values = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(f(values), np.cumsum(values))


def test_taps_as_dicts_and_outputs_not_fed_back():
    x = T.dvector("x")
    window = T.dvector("window")

    def step(x_prev, x_next, f_2, f_1):
        return [f_2 + f_1, x_prev * x_next]

    (fib, products), _ = ts.scan(step, sequences={"input": x, "taps": [-1, 1]},
                                 outputs_info=[{"initial": window, "taps": [-2, -1]}, None])
    f = ts.function([x, window], [fib, products])
    out = f(np.arange(6.0), np.array([0.0, 1.0]))
    np.testing.assert_allclose(out[0], [1, 2, 3, 5])
    np.testing.assert_allclose(out[1], [0 * 2, 1 * 3, 2 * 4, 3 * 5])


def test_n_steps_without_sequences_and_no_outputs_info():
    a = T.dscalar("a")
    powers, _ = ts.scan(lambda p: p * a, outputs_info=T.constant(1.0), n_steps=4)
    f = ts.function([a], powers)
    np.testing.assert_allclose(f(2.0), [2, 4, 8, 16])
    x = T.dvector("x")
    squares, _ = ts.scan(lambda v: v * v, sequences=x)
    np.testing.assert_allclose(ts.function([x], squares)(np.array([1.0, 2.0, 3.0])), [1, 4, 9])


def test_gradient_through_the_loop_matches_finite_differences():
    x = T.dmatrix("x")
    w = ts.shared(np.array([[0.5, -0.2], [0.1, 0.3]]), "w")
    h0 = T.dvector("h0")
    hs, _ = ts.scan(lambda x_t, h: T.tanh(T.dot(h, w) + x_t), sequences=x, outputs_info=h0)
    cost = T.sum(hs ** 2)
    gw = ts.grad(cost, w)
    f_cost = ts.function([x, h0], cost)
    f_grad = ts.function([x, h0], gw)
    xs = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.4]])
    start = np.array([0.2, -0.3])
    analytic = f_grad(xs, start)
    numeric = np.zeros_like(analytic)
    base = w.get_value()
    eps = 1e-6
    for index in np.ndindex(*base.shape):
        shifted = base.copy()
        shifted[index] += eps
        w.set_value(shifted)
        plus = f_cost(xs, start)
        shifted[index] -= 2 * eps
        w.set_value(shifted)
        minus = f_cost(xs, start)
        numeric[index] = (plus - minus) / (2 * eps)
    w.set_value(base)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_profile_has_the_loop_section_at_this_files_lines():
    x = T.dvector("x")
    outputs, _ = ts.scan(lambda x_t, total: total + T.exp(x_t), sequences=x,
                         outputs_info=T.constant(0.0), name="exp_sum")
    f = ts.function([x], outputs, profile=True, name="looped")
    for _ in range(2):
        f(np.ones(5))
    text = f.profile.snapshot().text()
    assert "Scan Op profiling [1] ( exp_sum )" in text
    assert "Time in 2 calls of the op (for a total of 10 steps)" in text
    # The Scan row points at the scan call, the body's rows at the step function's line.
    assert "<- scan at test_scan.py:" in text
    assert text.count("test_scan.py:") >= 2


def test_bad_state_type_names_the_scan():
    x = T.fvector("x")
    with pytest.raises(ts.TypeMismatchError, match="scan 'bad'"):
        ts.scan(lambda x_t, h: T.cast(h, "float64") + x_t, sequences=x,
                outputs_info=T.constant(np.float32(0.0)), name="bad")


def test_step_updates_and_random_draws_come_back_as_the_loops_updates():
    from tensorscope.tensor.shared_randomstreams import RandomStreams
    count = ts.shared(np.float64(0.0), name="count")
    srng = RandomStreams(11)
    x = T.dvector("x")

    def step(x_t):
        # Theano's form: the outputs and an updates dict.
        return x_t + count + srng.uniform((), 0.0, 0.5), {count: count + 1.0}

    outputs, updates = ts.scan(step, sequences=x)
    assert list(updates)[0] == count
    assert len(updates) == 2  # the counter, then the draw's state
    f = ts.function([x], outputs, updates=updates)
    first = f(np.zeros(4))
    # Step t reads the counter t left by the steps before it, plus noise in [0, 0.5).
    assert np.all(first - np.arange(4) >= 0) and np.all(first - np.arange(4) < 0.5)
    assert count.get_value() == 4.0
    second = f(np.zeros(4))
    noise_first, noise_second = first - np.arange(4), second - np.arange(4, 8)
    assert np.all(noise_second >= 0) and np.all(noise_second < 0.5)
    assert not np.array_equal(noise_first, noise_second)
    assert len(set(noise_first)) == 4  # fresh noise every step


def test_random_draws_in_the_step_advance_by_default():
    from tensorscope.tensor.shared_randomstreams import RandomStreams
    srng = RandomStreams(12)
    noise, _ = ts.scan(lambda: srng.normal((2,)), n_steps=3)
    f = ts.function([], noise)  # no updates passed: the streams' default updates apply
    first, second = f(), f()
    assert first.shape == (3, 2)
    assert len({tuple(row) for row in first}) == 3
    assert not np.array_equal(first, second)


def test_until_stops_the_loop_as_theanos_scan_module_until():
    # Doubles the value until it passes the limit: a while loop, at most 20 steps.
    start = T.dscalar("start")
    limit = T.dscalar("limit")

    def step(value, limit):
        doubled = value * 2
        return doubled, ts.scan_module.until(T.gt(doubled, limit))

    values, _ = ts.scan(step, outputs_info=start, non_sequences=limit, n_steps=20)
    f = ts.function([start, limit], values)
    np.testing.assert_allclose(f(1.0, 10.0), [2.0, 4.0, 8.0, 16.0])
    np.testing.assert_allclose(f(1.0, 1e9), 2.0 ** np.arange(1, 21))


def test_until_with_updates_in_any_order():
    counter = ts.shared(np.float64(0.0), "counter")
    x = T.dvector("x")
    outputs, updates = ts.scan(
        lambda x_t: (ts.until(T.ge(x_t, 3.0)), {counter: counter + 1}, x_t * 10), sequences=x)
    f = ts.function([x], outputs, updates=updates)
    np.testing.assert_allclose(f(np.array([1.0, 2.0, 3.0, 4.0, 5.0])), [10.0, 20.0, 30.0])
    assert counter.get_value() == 3.0
