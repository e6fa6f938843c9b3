# SPDX-License-Identifier: Apache-2.0
"""None (numpy.newaxis) and boolean masks in indexes, as NumPy indexes: values, writes through
masks, gradients against finite differences, and masks of the wrong shape."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T

A = np.arange(12.0).reshape(3, 4)


def run(inputs, outputs, *values):
    return ts.function(inputs, outputs)(*values)


def numeric_gradient(f, value, eps=1e-6):
    grad = np.zeros_like(value)
    for index in np.ndindex(*value.shape):
        step = np.zeros_like(value)
        step[index] = eps
        grad[index] = (f(value + step) - f(value - step)) / (2 * eps)
    return grad


def test_newaxis_adds_axes_where_numpy_does():
    x = T.dmatrix("x")
    i = T.lvector("i")
    keys = [np.s_[None], np.s_[:, None], np.s_[..., None], np.s_[None, 1:, None, 2],
            np.s_[1, None], np.s_[None, :, np.newaxis]]
    outputs = [x[key] for key in keys] + [x[None, i], x[i, None]]
    index = np.array([2, 0])
    results = run([x, i], outputs, A, index)
    expected = [A[key] for key in keys] + [A[None, index], A[index, None]]
    for got, want in zip(results, expected):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert x[None].broadcastable == (True, False, False)


def test_boolean_masks_select_like_numpy():
    x = T.dmatrix("x")
    flags = T.bmatrix("flags")
    rows = T.tensor(dtype="bool", shape=(None,), name="rows")
    columns = A.sum(axis=0) > 13  # a NumPy bool array becomes a constant mask
    outputs = [x[flags > 0], x[rows], x[:, columns], x[x > 5], x[rows, 1:],
               x[[True, False, True]], x[rows, None], x[flags > 0].sum()]
    flag_value = (A % 3 == 0).astype(np.int8)
    row_value = np.array([True, False, True])
    results = run([x, flags, rows], outputs, A, flag_value, row_value)
    expected = [A[flag_value > 0], A[row_value], A[:, columns], A[A > 5], A[row_value, 1:],
                A[[True, False, True]], A[row_value, None], A[flag_value > 0].sum()]
    for got, want in zip(results, expected):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert x[rows].static_shape == (None, None)


def test_uint8_arrays_index_by_integer_as_in_numpy():
    x = T.dmatrix("x")
    positions = np.array([2, 0, 2], dtype=np.uint8)
    np.testing.assert_array_equal(run([x], x[positions], A), A[positions])


def test_writes_through_masks():
    x = T.dmatrix("x")
    rows = T.tensor(dtype="bool", shape=(None,), name="rows")
    outputs = [T.set_subtensor(x[x > 5], 0.0), T.inc_subtensor(x[x > 5], 1.0),
               T.set_subtensor(x[rows], -1.0), T.inc_subtensor(x[:, [True, False, True, False]],
                                                              10.0)]
    row_value = np.array([False, True, True])
    results = run([x, rows], outputs, A, row_value)
    expected = [A.copy() for _ in outputs]
    expected[0][A > 5] = 0.0
    expected[1][A > 5] += 1.0
    expected[2][row_value] = -1.0
    expected[3][:, [True, False, True, False]] += 10.0
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


def test_gradient_through_a_mask_matches_finite_differences():
    x = T.dmatrix("x")
    mask = T.tensor(dtype="bool", shape=(None, None), name="mask")
    cost = T.sum(T.sqr(x[mask]) * T.arange(1.0, 6.0)[:5].sum())
    gx = ts.grad(cost, x)
    f = ts.function([x, mask], [cost, gx])
    mask_value = np.array([[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0]], dtype=bool)
    point = np.random.default_rng(0).normal(size=(3, 4))
    _, got = f(point, mask_value)
    want = numeric_gradient(lambda v: f(v, mask_value)[0], point)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.all(got[~mask_value] == 0)
    rows = T.tensor(dtype="bool", shape=(None,), name="rows")
    row_cost = T.sum(T.exp(x[rows]))
    g = ts.function([x, rows], ts.grad(row_cost, x))
    row_value = np.array([True, False, True])
    want = numeric_gradient(lambda v: ts.function([x, rows], row_cost)(v, row_value), point)
    np.testing.assert_allclose(g(point, row_value), want, rtol=1e-5, atol=1e-6)


def test_bad_masks_and_keys_are_errors():
    x = T.dmatrix("x")
    with pytest.raises(ts.IndexOutOfRangeError):
        T.tensor(dtype="float64", shape=(3, 4))[np.array([True, False])]
    rows = T.tensor(dtype="bool", shape=(None,), name="rows")
    selected = x[rows]
    line = selected.creation_site
    f = ts.function([x, rows], selected)
    with pytest.raises(ts.IndexOutOfRangeError) as caught:
        f(A, np.array([True, False]))
    assert isinstance(caught.value, IndexError)
    assert "NonZero" in str(caught.value) and line in str(caught.value)
    np.testing.assert_array_equal(f(A, np.array([False, True, False])), A[[1]])
    with pytest.raises(ts.UnsupportedError):
        x[True]
    with pytest.raises(ts.UnsupportedError):
        T.set_subtensor(x[None], 1.0)


def test_nonzero_family():
    x = T.dmatrix("x")
    value = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]])
    rows, columns = T.nonzero(x)
    results = run([x], [rows, columns, T.nonzero(x, return_matrix=True), T.flatnonzero(x),
                        T.nonzero_values(x)], value)
    want_rows, want_columns = np.nonzero(value)
    expected = [want_rows, want_columns, np.stack(np.nonzero(value)), np.flatnonzero(value),
                value[value != 0]]
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)
