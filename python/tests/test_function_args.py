# SPDX-License-Identifier: Apache-2.0
"""function's Theano arguments: ts.In (defaults, keyword names, strict, per-input casting),
ts.Out, allow_input_downcast and on_unused_input."""
import warnings

import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T


def test_in_with_a_default_makes_the_argument_optional_and_named():
    x = T.dvector("x")
    scale = T.dscalar("scale")
    shift = T.dscalar("shift")
    f = ts.function([x, ts.In(scale, value=2.0), ts.In(shift, value=0.5, name="offset")],
                    x * scale + shift)
    ones = np.ones(2)
    np.testing.assert_array_equal(f(ones), [2.5, 2.5])
    np.testing.assert_array_equal(f(ones, 3.0), [3.5, 3.5])
    np.testing.assert_array_equal(f(ones, offset=1.0), [3.0, 3.0])
    np.testing.assert_array_equal(f(x=ones, scale=1.0, offset=0.0), [1.0, 1.0])
    with pytest.raises(ts.InvalidArgumentError, match="no input named 'shift'"):
        f(ones, shift=1.0)
    with pytest.raises(ts.InvalidArgumentError, match="both by position and by keyword"):
        f(ones, 1.0, scale=2.0)
    with pytest.raises(ts.InvalidArgumentError, match="has no default value"):
        f(scale=1.0)
    with pytest.raises(ts.InvalidArgumentError, match="takes 3 inputs, 4 given"):
        f(ones, 1.0, 1.0, 1.0)
    np.testing.assert_array_equal(f(ones), [2.5, 2.5])  # still usable


def test_in_settings():
    x = T.fvector("x")
    strict = ts.function([ts.In(x, strict=True)], x * 2)
    np.testing.assert_array_equal(strict(np.ones(2, np.float32)), [2.0, 2.0])
    with pytest.raises(ts.TypeMismatchError, match="strict"):
        strict(np.ones(2, np.int8))
    with pytest.raises(ts.TypeMismatchError, match="strict"):
        strict([1.0, 2.0])
    loose = ts.function([ts.In(x, allow_downcast=True, borrow=True)], x * 2)
    assert loose(np.ones(2)).dtype == np.float32
    s = T.dscalar()
    unnamed = ts.function([ts.In(s, value=1.0)], s + 1)
    assert unnamed() == 2.0
    assert unnamed(2.0) == 3.0
    with pytest.raises(ts.UnsupportedError):
        ts.In(x, update=x + 1)
    with pytest.raises(ts.TypeMismatchError):
        ts.In(np.ones(2))


def test_out_is_accepted_alone_and_in_lists():
    x = T.dvector("x")
    single = ts.function([x], ts.Out(x + 1, borrow=True))
    assert isinstance(single(np.zeros(2)), np.ndarray)
    pair = ts.function([x], [ts.Out(x + 1), x * 2])
    got = pair(np.ones(2))
    np.testing.assert_array_equal(got[0], [2.0, 2.0])
    np.testing.assert_array_equal(got[1], [2.0, 2.0])


def test_allow_input_downcast_follows_theano():
    x = T.fvector("x")
    i = T.ivector("i")
    d = T.dvector("d")
    default = ts.function([x], x + 1)
    # Safe casts are made (int8 into float32); a float64 array could lose precision.
    assert default(np.ones(2, np.int8)).dtype == np.float32
    with pytest.raises(ts.TypeMismatchError, match="allow_input_downcast"):
        default(np.ones(2))
    # Python values are converted when nothing is lost.
    np.testing.assert_array_equal(default([1, 2]), [2.0, 3.0])
    with pytest.raises(ts.TypeMismatchError, match="loss of precision"):
        default([0.1])
    np.testing.assert_array_equal(ts.function([d], d + 1)(np.ones(2, np.float32)), [2.0, 2.0])
    # True casts anything, as NumPy's astype does.
    anything = ts.function([x, i], [x + 1, i + 1], allow_input_downcast=True)
    got = anything(np.array([0.1, 0.2]), np.array([1.7, -2.2]))
    assert got[0].dtype == np.float32 and got[1].dtype == np.int32
    np.testing.assert_array_equal(got[1], [2, -1])
    # False: no Python float becomes float32 either; None lets one become floatX.
    s = T.fscalar("s")
    never = ts.function([s], s * 2, allow_input_downcast=False)
    with pytest.raises(ts.TypeMismatchError):
        never(0.1)
    float_x = ts.config.floatX
    try:
        ts.config.floatX = "float32"
        assert ts.function([s], s * 2)(0.1) == np.float32(0.2)
    finally:
        ts.config.floatX = float_x
    with pytest.raises(ts.InvalidArgumentError):
        ts.function([x], x, allow_input_downcast="yes")


def test_on_unused_input():
    x = T.dvector("x")
    unused = T.dvector("unused")
    with pytest.raises(ts.InvalidArgumentError, match=r"'unused'\) is not part of the graph"):
        ts.function([x, unused], x + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = ts.function([x, unused], x + 1, on_unused_input="warn")
    assert any("'unused'" in str(w.message) for w in caught)
    np.testing.assert_array_equal(f(np.ones(2), np.zeros(5)), [2.0, 2.0])
    ignored = ts.function([x, unused], x + 1, on_unused_input="ignore")
    np.testing.assert_array_equal(ignored(np.ones(2), np.zeros(1)), [2.0, 2.0])
    # An input read only by an update, or only through its shape, is used.
    w = ts.shared(np.zeros(2), "w")
    ts.function([x, unused], x.sum(), updates={w: w + unused})
    ts.function([unused], T.shape(unused))
    previous = ts.config.on_unused_input
    try:
        ts.config.on_unused_input = "ignore"
        ts.function([x, unused], x + 1)
        with pytest.raises(ts.BadFlagError):
            ts.config.on_unused_input = "maybe"
    finally:
        ts.config.on_unused_input = previous
    with pytest.raises(ts.InvalidArgumentError):
        ts.function([x], x, on_unused_input="sometimes")
