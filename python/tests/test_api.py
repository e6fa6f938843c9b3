# SPDX-License-Identifier: Apache-2.0
"""Theano's names and operators compute what NumPy computes."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T

A = np.arange(6.0).reshape(2, 3)


def run(inputs, outputs, *values):
    return ts.function(inputs, outputs)(*values)


def test_constructors_have_theano_names_and_dtypes():
    assert T.matrix("m").dtype == ts.config.floatX
    assert T.fmatrix("m").dtype == "float32"
    assert T.dvector().dtype == "float64"
    assert T.iscalar("i").dtype == "int32"
    assert T.lvector().dtype == "int64"
    assert T.btensor3().ndim == 3
    assert T.tensor4("t", dtype="float32").ndim == 4
    assert T.tensor5().ndim == 5
    assert T.row().broadcastable == (True, False)
    assert T.col().broadcastable == (False, True)
    assert T.matrix("m").name == "m"
    assert T.tensor(dtype="int64", broadcastable=(False, True)).broadcastable == (False, True)


def test_operators_match_numpy():
    x = T.dmatrix("x")
    outputs = [x + 1, 1 - x, x * x, x / 2, 2 / (x + 1), x // 2, x % 4, x ** 2, 2 ** x, -x,
               abs(-x), x @ x.T, x.T, x > 2, x <= 2, (x > 1) & (x < 4), ~(x > 2)]
    expected = [A + 1, 1 - A, A * A, A / 2, 2 / (A + 1), A // 2, A % 4, A ** 2, 2 ** A, -A,
                np.abs(-A), A @ A.T, A.T, A > 2, A <= 2, (A > 1) & (A < 4), ~(A > 2)]
    for got, want in zip(run([x], outputs, A), expected):
        np.testing.assert_allclose(got, want)


def test_integer_variable_times_python_float_is_not_truncated():
    i = T.lvector("i")
    np.testing.assert_allclose(run([i], i * 0.5, np.array([1, 3])), [0.5, 1.5])


def test_tensor_functions_match_numpy():
    x = T.dmatrix("x")
    outputs = [T.dot(x, x.T), T.exp(x), T.log(x + 1), T.tanh(x), T.sqr(x), T.sqrt(x),
               T.mean(x), T.sum(x, axis=0), T.max(x, axis=1), T.argmax(x, axis=1),
               T.switch(x > 2, x, 0), T.concatenate([x, x], axis=1), T.stack([x, x]),
               T.zeros_like(x), T.cast(x, "int32"), T.maximum(x, 3), T.clip(x, 1, 4),
               T.prod(x + 1, axis=1), T.var(x), T.std(x, axis=0), T.min(x, keepdims=True)]
    expected = [A @ A.T, np.exp(A), np.log(A + 1), np.tanh(A), A ** 2, np.sqrt(A), A.mean(),
                A.sum(axis=0), A.max(axis=1), A.argmax(axis=1), np.where(A > 2, A, 0),
                np.concatenate([A, A], axis=1), np.stack([A, A]), np.zeros_like(A),
                A.astype(np.int32), np.maximum(A, 3), np.clip(A, 1, 4), (A + 1).prod(axis=1),
                A.var(), A.std(axis=0), A.min(keepdims=True)]
    for got, want in zip(run([x], outputs, A), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert got.shape == want.shape


def test_variable_methods():
    x = T.dmatrix("x")
    outputs = [x.sum(axis=1, keepdims=True), x.mean(axis=0), x.max(), x.reshape((3, 2)),
               x.reshape((x.shape[0], -1, 1)), x.dimshuffle(1, "x", 0), x.flatten(),
               x.astype("float32"), x.shape, x.shape[1], x.T.dot(x), x.clip(1, 2)]
    expected = [A.sum(axis=1, keepdims=True), A.mean(axis=0), A.max(), A.reshape(3, 2),
                A.reshape(2, -1, 1), A.T[:, None, :], A.flatten(), A.astype(np.float32),
                np.array(A.shape), 3, A.T @ A, A.clip(1, 2)]
    results = run([x], outputs, A)
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got, want)
    assert results[7].dtype == np.float32


def test_indexing_and_subtensor_writes():
    x = T.dmatrix("x")
    i = T.ivector("i")
    k = T.lscalar("k")
    outputs = [x[1], x[:, 0], x[1:, ::2], x[-1, ...], x[i], x[k:], x[[0, 0]],
               T.set_subtensor(x[0], 5.0), T.inc_subtensor(x[:, 1:], 1.0),
               T.inc_subtensor(x[i], 1.0)]
    index = np.array([1, 0, 1], dtype=np.int32)
    results = run([x, i, k], outputs, A, index, np.int64(1))
    set_row = A.copy()
    set_row[0] = 5
    increment = A.copy()
    increment[:, 1:] += 1
    rows = A.copy()
    np.add.at(rows, index, 1.0)
    expected = [A[1], A[:, 0], A[1:, ::2], A[-1, ...], A[index], A[1:], A[[0, 0]], set_row,
                increment, rows]
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got, want)


def test_nnet():
    x = T.dmatrix("x")
    labels = T.lvector("labels")
    softmax = np.exp(A) / np.exp(A).sum(axis=1, keepdims=True)
    results = run([x, labels],
                  [T.nnet.softmax(x), T.nnet.relu(x - 3), T.nnet.sigmoid(x),
                   T.nnet.categorical_crossentropy(T.nnet.softmax(x), labels)],
                  A, np.array([2, 0]))
    np.testing.assert_allclose(results[0], softmax)
    np.testing.assert_allclose(results[1], np.maximum(A - 3, 0))
    np.testing.assert_allclose(results[2], 1 / (1 + np.exp(-A)))
    np.testing.assert_allclose(results[3], -np.log(softmax[[0, 1], [2, 0]]))


def test_shared_grad_updates_train():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(50, 3))
    target = data @ np.array([1.0, -2.0, 0.5])
    x = T.dmatrix("x")
    y = T.dvector("y")
    w = ts.shared(np.zeros(3), "w")
    cost = T.mean(T.sqr(T.dot(x, w) - y))
    gw = ts.grad(cost, w)
    train = ts.function([x, y], cost, updates=[(w, w - 0.1 * gw)])
    losses = [float(train(data, target)) for _ in range(200)]
    assert losses[-1] < 1e-3 * losses[0]
    np.testing.assert_allclose(w.get_value(), [1.0, -2.0, 0.5], atol=1e-2)
    w.set_value(np.ones(3))
    np.testing.assert_allclose(w.get_value(), np.ones(3))


def test_shared_value_is_a_copy_unless_borrowed():
    value = np.zeros(3)
    w = ts.shared(value, "w")
    value[0] = 7
    assert w.get_value()[0] == 0
    got = w.get_value()
    got[1] = 7
    assert w.get_value()[1] == 0


def test_grad_of_list_and_disconnected_inputs():
    x = T.dscalar("x")
    z = T.dscalar("z")
    gx, gz = ts.grad(x * x, [x, z], disconnected_inputs="ignore")
    assert run([x, z], [gx, gz], 3.0, 1.0) == [6.0, 0.0]
    with pytest.raises(ts.InvalidArgumentError):
        ts.grad(x * x, z)


def test_grad_consider_constant_stops_the_gradient():
    x = T.dscalar("x")
    y = T.exp(x)
    cost = y * x
    full = ts.grad(cost, x)
    stopped = ts.grad(cost, x, consider_constant=[y])
    got_full, got_stopped = run([x], [full, stopped], 0.5)
    assert got_full == pytest.approx(np.exp(0.5) * 1.5)
    assert got_stopped == pytest.approx(np.exp(0.5))


def test_givens_replace_a_variable():
    x = T.dmatrix("x")
    y = T.dvector("y")
    h = ts.function([y], (x * 2).sum(axis=0) + y, givens={x: T.ones((2, 3), dtype="float64")})
    np.testing.assert_allclose(h(np.ones(3)), [5.0, 5.0, 5.0])


def test_outputs_single_list_and_none():
    x = T.dvector("x")
    assert isinstance(ts.function([x], x + 1)(np.ones(2)), np.ndarray)
    assert isinstance(ts.function([x], [x + 1])(np.ones(2)), list)
    w = ts.shared(np.zeros(2), "w")
    step = ts.function([x], updates={w: w + x})
    assert step(np.ones(2)) == []
    np.testing.assert_allclose(w.get_value(), [1.0, 1.0])


def test_variables_are_dict_keys_and_have_no_truth_value():
    x = T.dvector("x")
    assert {x: 1}[x] == 1
    with pytest.raises(TypeError):
        bool(x > 0)
    with pytest.raises(TypeError):
        len(x)


def test_config_flags_use_the_engine_parser():
    assert ts.config.profile is False
    assert ts.config.profiling.n_apply == 20
    with pytest.raises(ts.BadFlagError):
        ts.config.profiling.n_apply = 0
    with pytest.raises(ts.BadFlagError):
        ts.config.no_such_flag = 1
    with pytest.raises(ts.BadFlagError):
        ts.config.floatX = "float16"
    ts.config.profiling.n_apply = 7
    assert ts.config.flags()["profiling.n_apply"] == 7
    ts.config.profiling.n_apply = 20
