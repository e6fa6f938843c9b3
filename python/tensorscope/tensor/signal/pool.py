# SPDX-License-Identifier: Apache-2.0
"""T.signal.pool: Theano's pool_2d and pool_3d on the engine's MaxPool and AveragePool."""
from ... import _core

# Theano's mode -> the engine's kind.
_MODES = {"max": "max", "sum": "sum", "average_inc_pad": "average", "average_exc_pad": "average"}


def _pool(input, ws, ignore_border, stride, pad, mode, spatial):
    if mode not in _MODES:
        raise _core.UnsupportedError(
            f"pool: mode {mode!r} is not supported; expected one of {', '.join(_MODES)}")
    pad = list(pad) if pad is not None else [0] * spatial
    if not ignore_border and any(pad):
        raise _core.UnsupportedError(
            "pool: padding works only with ignore_border=True, as in Theano")
    # With ignore_border=False (the engine's ceil_mode) the last window of an axis may be partial;
    # Theano averages it over the elements it holds in both average modes, as include_pad=False
    # does when there is no padding.
    include_pad = mode == "average_inc_pad" and ignore_border
    return _core.pool(input, _MODES[mode], list(ws), list(stride if stride is not None else ws),
                      pad, pad, include_pad, not ignore_border)


def pool_2d(input, ws, ignore_border=True, stride=None, pad=(0, 0), mode="max"):
    """Pooling over the last two axes of (N, C, H, W); stride defaults to ws. ignore_border=False
    keeps the partial windows at the end of each axis (no padding then). mode: 'max', 'sum',
    'average_inc_pad' (padding counts in the divisor) or 'average_exc_pad'."""
    return _pool(input, ws, ignore_border, stride, pad, mode, 2)


def pool_3d(input, ws, ignore_border=True, stride=None, pad=(0, 0, 0), mode="max"):
    """pool_2d over the last three axes of (N, C, D, H, W)."""
    return _pool(input, ws, ignore_border, stride, pad, mode, 3)
