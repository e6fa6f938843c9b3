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
    with pytest.raises(ts.UnsupportedError):
        pool.pool_2d(x, (2, 2), ignore_border=False)


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
    with pytest.raises(ts.UnsupportedError):
        T.nnet.bn.batch_normalization_test(x, gamma, beta, running_mean, running_var,
                                           axes="per-activation")
