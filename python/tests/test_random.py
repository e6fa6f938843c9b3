# SPDX-License-Identifier: Apache-2.0
"""RandomStreams: fresh samples per call through default updates, reproducible by seed."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T
from tensorscope.tensor.shared_randomstreams import RandomStreams


def test_draws_advance_each_call_and_repeat_with_the_seed():
    def samples(seed):
        srng = RandomStreams(seed)
        noise = srng.normal((1000,), avg=1.0, std=2.0)
        f = ts.function([], noise)
        return f(), f()

    first, second = samples(5)
    assert not np.array_equal(first, second)
    assert abs(first.mean() - 1.0) < 0.3 and abs(first.std() - 2.0) < 0.3
    again, _ = samples(5)
    np.testing.assert_array_equal(first, again)


def test_uniform_integers_binomial_and_dropout():
    srng = RandomStreams(1)
    x = T.tensor(dtype="float64", shape=(500,), name="x")
    outputs = [srng.uniform((500,), 2.0, 3.0), srng.random_integers((500,), 1, 3),
               srng.binomial((500,), p=0.25), srng.dropout(x, 0.5)]
    uniform, integers, coins, dropped = ts.function([x], outputs)(np.ones(500))
    assert uniform.min() >= 2.0 and uniform.max() < 3.0
    assert set(np.unique(integers)) == {1, 2, 3}
    assert 0.15 < coins.mean() < 0.35
    assert set(np.unique(dropped)) <= {0.0, 2.0}


def test_functions_without_draws_get_no_state_updates():
    srng = RandomStreams(2)
    draw = srng.uniform((3,))
    x = T.dvector("x")
    other = ts.function([x], x + 1)
    for _ in range(3):
        other(np.ones(3))  # must not advance the draw's state
    fresh = ts.function([], RandomStreams(2).uniform((3,)))()
    np.testing.assert_array_equal(ts.function([], draw)(), fresh)


def test_symbolic_sizes_are_read_when_the_function_runs():
    x = T.dmatrix("x")
    n = T.iscalar("n")
    srng = RandomStreams(7)
    outputs = [srng.normal(x.shape), srng.uniform((n, 3)), srng.random_integers((n,), 0, 5),
               srng.binomial(x.shape, p=0.5), srng.dropout(x, 0.5)]
    assert outputs[0].static_shape == (None, None)
    assert outputs[1].static_shape == (None, 3)
    normal, uniform, integers, coins, dropped = ts.function([x, n], outputs)(np.ones((4, 5)), 2)
    assert normal.shape == (4, 5) and uniform.shape == (2, 3) and integers.shape == (2,)
    assert coins.shape == (4, 5) and dropped.shape == (4, 5)
    assert set(np.unique(dropped)) <= {0.0, 2.0}
    # The same draws with static sizes give the same samples.
    same = RandomStreams(7)
    np.testing.assert_array_equal(ts.function([], same.normal((4, 5)))(), normal)
    with pytest.raises(ts.InvalidArgumentError):
        ts.function([n], RandomStreams(1).uniform((n,)))(-1)
    with pytest.raises(ts.TypeMismatchError):
        RandomStreams(0).uniform(T.dmatrix("m"))
