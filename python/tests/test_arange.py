# SPDX-License-Identifier: Apache-2.0
"""T.arange: numpy.arange's values for Python numbers and symbolic scalars, Theano's dtypes, and
bad bounds as errors naming the node and the user's line."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T


@pytest.mark.parametrize("args", [(5,), (2, 9), (10, 0, -3), (-7, 8, 4), (3, 3), (5, 0),
                                  (0.0, 1.0, 0.1), (1.5, -2.0, -0.5), (0, 5.5)])
def test_constant_bounds_match_numpy(args):
    got = ts.function([], T.arange(*args))()
    want = np.arange(*args)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want)


def test_symbolic_bounds_have_a_run_time_length():
    start = T.lscalar("start")
    stop = T.lscalar("stop")
    step = T.lscalar("step")
    r = T.arange(start, stop, step)
    assert r.dtype == "int64"
    assert r.static_shape == (None,)
    f = ts.function([start, stop, step], r)
    for bounds in [(0, 10, 1), (10, 0, -3), (4, 4, 1), (-5, 6, 4)]:
        np.testing.assert_array_equal(f(*bounds), np.arange(*bounds))
    n = T.iscalar("n")
    np.testing.assert_array_equal(ts.function([n], T.arange(n))(4), np.arange(4))


def test_dtypes_follow_theano():
    i = T.iscalar("i")
    f = T.fscalar("f")
    assert T.arange(i).dtype == "int64"
    assert T.arange(f).dtype == "float32"
    assert T.arange(i, 10.0).dtype == "float64"
    assert T.arange(3, dtype="float32").dtype == "float32"
    x = T.fvector("x")
    positions = T.arange(x.shape[0], dtype="float32")
    np.testing.assert_array_equal(ts.function([x], x * positions)(np.ones(3, np.float32)),
                                  [0.0, 1.0, 2.0])


def test_static_length_from_a_static_shape():
    x = T.tensor(dtype="float64", shape=(6, None), name="x")
    assert T.arange(T.shape(x)[0]).static_shape in ((6,), (None,))
    assert T.arange(0, 4, 2).static_shape == (2,)


def test_gradient_of_a_float_arange_is_theanos():
    start = T.dscalar("start")
    step = T.dscalar("step")
    cost = T.sum(T.arange(start, 5.0, step))
    g_start, g_step = ts.grad(cost, [start, step])
    got = ts.function([start, step], [g_start, g_step])(0.3, 0.7)
    n = len(np.arange(0.3, 5.0, 0.7))
    np.testing.assert_allclose(got, [n, n * (n - 1) / 2])


def expect_error(call, error_class, *fragments):
    with pytest.raises(error_class) as caught:
        call()
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)
    return caught.value


def test_bad_bounds_are_errors_naming_the_users_line():
    error = expect_error(lambda: T.arange(0, 5, 0), ts.InvalidArgumentError, "step is 0",
                         "test_arange.py")
    assert isinstance(error, ValueError)
    expect_error(lambda: T.arange(-2**63, 2**63 - 1), ts.InvalidArgumentError, "overflows")
    expect_error(lambda: T.arange(T.lvector("v")), ts.TypeMismatchError, "stop")
    expect_error(lambda: T.arange(3, dtype="bool"), ts.TypeMismatchError)
    step = T.lscalar("step")
    r = T.arange(0, 10, step)
    line = r.creation_site
    f = ts.function([step], r)
    expect_error(lambda: f(0), ts.InvalidArgumentError, "step is 0", "ARange", line)
    np.testing.assert_array_equal(f(3), [0, 3, 6, 9])  # still usable
