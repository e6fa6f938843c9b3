# SPDX-License-Identifier: Apache-2.0
"""T.nnet.conv2d/conv3d, T.signal.pool and T.nnet.bn against NumPy references."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T
from tensorscope.tensor.signal import pool


def correlate(x, w, pad=0, stride=1):
    """Cross-correlation of x (N, C, H, W) with w (O, C, kH, kW)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, width = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, (h - kh) // stride + 1, (width - kw) // stride + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            window = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", window, w)
    return out


RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 3, 6, 6))
W = RNG.normal(size=(4, 3, 3, 3))


@pytest.mark.parametrize("flip, border_mode, subsample, pad", [
    (False, "valid", (1, 1), 0), (True, "valid", (1, 1), 0), (False, "half", (1, 1), 1),
    (False, "full", (1, 1), 2), (False, 1, (2, 2), 1)])
def test_conv2d(flip, border_mode, subsample, pad):
    x = T.dtensor4("x")
    w = T.dtensor4("w")
    y = T.nnet.conv2d(x, w, border_mode=border_mode, subsample=subsample, filter_flip=flip)
    got = ts.function([x, w], y)(X, W)
    kernel = W[:, :, ::-1, ::-1] if flip else W
    np.testing.assert_allclose(got, correlate(X, kernel, pad, subsample[0]), rtol=1e-6,
                               atol=1e-9)


def test_conv3d_shape_and_grad():
    x = T.dtensor5("x")
    w = ts.shared(RNG.normal(size=(2, 1, 3, 3, 3)), "w")
    y = T.nnet.conv3d(x, w, border_mode="half")
    gw = ts.grad(T.sum(y), w)
    out, grad = ts.function([x], [y, gw])(np.ones((1, 1, 4, 4, 4)))
    assert out.shape == (1, 2, 4, 4, 4)
    assert grad.shape == (2, 1, 3, 3, 3)


def test_pool_2d_max_and_average():
    x = T.dtensor4("x")
    outputs = [pool.pool_2d(x, (2, 2)), pool.pool_2d(x, (2, 2), mode="average_exc_pad"),
               pool.pool_2d(x, (3, 3), stride=(1, 1))]
    got = ts.function([x], outputs)(X)
    blocks = X.reshape(2, 3, 3, 2, 3, 2)
    np.testing.assert_allclose(got[0], blocks.max(axis=(3, 5)))
    np.testing.assert_allclose(got[1], blocks.mean(axis=(3, 5)))
    assert got[2].shape == (2, 3, 4, 4)


def theano_pool(x, ws, stride, mode, ignore_border):
    """Theano's Pool.perform without padding: windows start inside the input, and with
    ignore_border=False the last one of an axis may be partial."""
    out_shape = []
    for extent, w, s in zip(x.shape[-2:], ws, stride):
        if ignore_border:
            out_shape.append((extent - w) // s + 1)
        elif s >= w:
            out_shape.append((extent - 1) // s + 1)
        else:
            out_shape.append(max(0, (extent - 1 - w + s) // s) + 1)
    out = np.zeros(x.shape[:-2] + tuple(out_shape))
    reduce = {"max": np.max, "sum": np.sum}.get(mode, np.mean)
    for i in range(out_shape[0]):
        for j in range(out_shape[1]):
            rows = slice(i * stride[0], i * stride[0] + ws[0])
            columns = slice(j * stride[1], j * stride[1] + ws[1])
            out[..., i, j] = reduce(x[..., rows, columns], axis=(-2, -1))
    return out


@pytest.mark.parametrize("mode", ["max", "sum", "average_inc_pad", "average_exc_pad"])
@pytest.mark.parametrize("ws, stride", [((2, 2), None), ((3, 2), (2, 3)), ((2, 2), (3, 3)),
                                        ((7, 1), (1, 1))])
def test_pool_2d_ignore_border_false_and_sum(mode, ws, stride):
    x = T.dtensor4("x")
    value = RNG.normal(size=(2, 3, 5, 7))
    y = pool.pool_2d(x, ws, ignore_border=False, stride=stride, mode=mode)
    f = ts.function([x], [y, ts.grad(T.sum(T.sqr(y)), x)])
    got, gx = f(value)
    np.testing.assert_allclose(got, theano_pool(value, ws, stride or ws, mode, False), rtol=1e-12)
    # The gradient against central differences on a few elements.
    cost = ts.function([x], T.sum(T.sqr(y)))
    for index in [(0, 0, 0, 0), (1, 2, 4, 6), (0, 1, 3, 5)]:
        step = np.zeros_like(value)
        step[index] = 1e-6
        numeric = (cost(value + step) - cost(value - step)) / 2e-6
        assert gx[index] == pytest.approx(numeric, rel=1e-5, abs=1e-7)
    if mode == "sum" and ws[0] <= value.shape[2]:
        full = ts.function([x], pool.pool_2d(x, ws, stride=stride, mode="sum"))(value)
        np.testing.assert_allclose(full, theano_pool(value, ws, stride or ws, "sum", True),
                                   rtol=1e-12)


def test_pool_float32_partial_windows_and_bad_arguments():
    x = T.ftensor4("x")
    value = RNG.normal(size=(1, 2, 5, 5)).astype(np.float32)
    got = ts.function([x], pool.pool_2d(x, (2, 2), ignore_border=False, mode="sum"))(value)
    np.testing.assert_allclose(got, theano_pool(value, (2, 2), (2, 2), "sum", False), rtol=1e-5)
    with pytest.raises(ts.UnsupportedError, match="ignore_border"):
        pool.pool_2d(x, (2, 2), ignore_border=False, pad=(1, 1))
    with pytest.raises(ts.UnsupportedError):
        pool.pool_2d(x, (2, 2), mode="median")
    three = T.dtensor5("three")
    out = ts.function([three], pool.pool_3d(three, (2, 2, 2), ignore_border=False))(
        np.ones((1, 1, 3, 3, 3)))
    assert out.shape == (1, 1, 2, 2, 2)


def test_batch_normalization_train_and_test():
    x = T.dtensor4("x")
    gamma = ts.shared(np.ones(3), "gamma")
    beta = ts.shared(np.zeros(3), "beta")
    running_mean = ts.shared(np.zeros(3), "running_mean")
    running_var = ts.shared(np.ones(3), "running_var")
    out, mean, invstd, new_mean, new_var = T.nnet.bn.batch_normalization_train(
        x, gamma, beta, epsilon=1e-5, running_mean=running_mean, running_var=running_var)
    train = ts.function([x], [out, mean, invstd],
                        updates=[(running_mean, new_mean), (running_var, new_var)])
    got, got_mean, got_invstd = train(X)
    want_mean = X.mean(axis=(0, 2, 3))
    want_var = X.var(axis=(0, 2, 3))
    want = (X - want_mean[None, :, None, None]) / np.sqrt(want_var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got_mean, want_mean)
    np.testing.assert_allclose(got_invstd, 1 / np.sqrt(want_var + 1e-5))
    np.testing.assert_allclose(running_mean.get_value(), 0.1 * want_mean)
    test = ts.function([x], T.nnet.bn.batch_normalization_test(
        x, gamma, beta, running_mean, running_var, epsilon=1e-5))
    assert test(X).shape == X.shape


def reference_batch_norm(x, gamma, beta, axes, epsilon):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * gamma + beta, mean, var


@pytest.mark.parametrize("axes, full_rank_parameters", [
    ("per-activation", False), ("per-activation", True), ((0, 1), False), ((1, 3), True),
    ((0, 1, 2, 3), False), ("spatial", True)])
def test_batch_normalization_over_other_axes(axes, full_rank_parameters):
    normalized = {"per-activation": (0,), "spatial": (0, 2, 3)}.get(axes, axes)
    kept = [axis for axis in range(4) if axis not in normalized]
    keep_shape = tuple(1 if axis in normalized else X.shape[axis] for axis in range(4))
    parameter_shape = keep_shape if full_rank_parameters else tuple(X.shape[a] for a in kept)
    gamma_value = RNG.uniform(0.5, 1.5, size=parameter_shape)
    beta_value = RNG.normal(size=parameter_shape)
    x = T.dtensor4("x")
    gamma = ts.shared(gamma_value, "gamma")
    beta = ts.shared(beta_value, "beta")
    running_mean = ts.shared(np.zeros(parameter_shape), "running_mean")
    running_var = ts.shared(np.ones(parameter_shape), "running_var")
    out, mean, invstd, new_mean, new_var = T.nnet.bn.batch_normalization_train(
        x, gamma, beta, axes=axes, epsilon=1e-4, running_mean=running_mean,
        running_var=running_var)
    cost = T.sum(T.sqr(out) * T.arange(1.0, 1.0 + X.size).reshape(X.shape))
    train = ts.function([x], [out, mean, invstd, ts.grad(cost, x), cost],
                        updates=[(running_mean, new_mean), (running_var, new_var)])
    got, got_mean, got_invstd, gx, _ = train(X)
    want, want_mean, want_var = reference_batch_norm(X, gamma_value.reshape(keep_shape),
                                                     beta_value.reshape(keep_shape), normalized,
                                                     1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got_mean, want_mean.reshape(parameter_shape), rtol=1e-9)
    np.testing.assert_allclose(got_invstd, (1 / np.sqrt(want_var + 1e-4)).reshape(parameter_shape))
    count = X.size / np.prod([X.shape[a] for a in kept])
    np.testing.assert_allclose(running_var.get_value(),
                               0.9 + 0.1 * want_var.reshape(parameter_shape) * count / (count - 1))
    cost_of = ts.function([x], cost)
    for index in [(0, 0, 0, 0), (1, 2, 5, 3), (0, 1, 2, 4)]:
        step = np.zeros_like(X)
        step[index] = 1e-4
        numeric = (cost_of(X + step) - cost_of(X - step)) / 2e-4
        assert gx[index] == pytest.approx(numeric, rel=1e-4, abs=1e-6)
    test = ts.function([x], T.nnet.bn.batch_normalization_test(
        x, gamma, beta, running_mean, running_var, axes=axes, epsilon=1e-4))
    mean_value = running_mean.get_value().reshape(keep_shape)
    var_value = running_var.get_value().reshape(keep_shape)
    np.testing.assert_allclose(
        test(X), (X - mean_value) / np.sqrt(var_value + 1e-4) * gamma_value.reshape(keep_shape)
        + beta_value.reshape(keep_shape), rtol=1e-6, atol=1e-9)


def test_batch_normalization_elementwise_and_bad_axes():
    x = T.dmatrix("x")
    value = RNG.normal(size=(4, 3))
    mean, std = value.mean(axis=0), value.std(axis=0)
    y = T.nnet.batch_normalization(x, 2.0, 0.5, mean, std)
    np.testing.assert_allclose(ts.function([x], y)(value), (value - mean) * (2.0 / std) + 0.5)
    assert T.nnet.bn.batch_normalization is T.nnet.batch_normalization
    gamma = ts.shared(np.ones(3), "gamma")
    for axes in [(), (0, 5), "channels"]:
        with pytest.raises(ts.InvalidArgumentError):
            T.nnet.bn.batch_normalization_test(x, gamma, gamma, gamma, gamma, axes=axes)
    with pytest.raises(ts.TypeMismatchError, match="gamma"):
        T.nnet.bn.batch_normalization_test(T.dtensor4(), ts.shared(np.ones((3, 3))), gamma,
                                           gamma, gamma, axes="per-activation")
