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
    x = T.tensor(dtype="float64", shape=(500,), name="x")  # dropout needs static dims
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


def test_symbolic_size_is_an_error():
    x = T.dvector("x")
    with pytest.raises(ts.UnsupportedError):
        RandomStreams(0).uniform(x.shape)
