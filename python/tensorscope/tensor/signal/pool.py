# SPDX-License-Identifier: Apache-2.0
"""T.signal.pool: Theano's pool_2d and pool_3d on the engine's MaxPool and AveragePool."""
from ... import _core

_MODES = {"max": ("max", False), "average_inc_pad": ("average", True),
          "average_exc_pad": ("average", False)}


def _pool(input, ws, ignore_border, stride, pad, mode, spatial):
    if not ignore_border:
        raise _core.UnsupportedError(
            "pool: ignore_border=False (partial windows at the end) is not supported")
    if mode not in _MODES:
        raise _core.UnsupportedError(
            f"pool: mode {mode!r} is not supported; expected one of {', '.join(_MODES)}")
    kind, include_pad = _MODES[mode]
    pad = list(pad) if pad is not None else [0] * spatial
    return _core.pool(input, kind, list(ws), list(stride if stride is not None else ws), pad, pad,
                      include_pad)


def pool_2d(input, ws, ignore_border=True, stride=None, pad=(0, 0), mode="max"):
    """Pooling over the last two axes of (N, C, H, W); stride defaults to ws."""
    return _pool(input, ws, ignore_border, stride, pad, mode, 2)


def pool_3d(input, ws, ignore_border=True, stride=None, pad=(0, 0, 0), mode="max"):
    """Pooling over the last three axes of (N, C, D, H, W)."""
    return _pool(input, ws, ignore_border, stride, pad, mode, 3)
