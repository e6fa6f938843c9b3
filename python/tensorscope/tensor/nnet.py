# SPDX-License-Identifier: Apache-2.0
"""tensorscope.tensor.nnet (T.nnet): Theano's neural-network functions on the engine's ops."""
from .. import _core

sigmoid = _core.sigmoid
softplus = _core.softplus
relu = _core.relu
softmax = _core.softmax
logsoftmax = _core.log_softmax
log_softmax = _core.log_softmax
categorical_crossentropy = _core.categorical_crossentropy
crossentropy_categorical_1hot = _core.crossentropy_categorical_1hot
binary_crossentropy = _core.binary_crossentropy
softmax_cross_entropy = _core.softmax_cross_entropy


def _border(border_mode, kernel_rank):
    """Theano's border_mode as the engine's padding: (mode, begin, end)."""
    if border_mode == "valid":
        return "explicit", [], []
    if border_mode == "full":
        return "full", [], []
    if border_mode == "half":
        return "same", [], []
    if isinstance(border_mode, int):
        border_mode = (border_mode,) * kernel_rank
    if isinstance(border_mode, (tuple, list)) and all(isinstance(p, int) for p in border_mode):
        return "explicit", list(border_mode), list(border_mode)
    raise _core.InvalidArgumentError(
        f"conv: border_mode {border_mode!r} is not supported; expected 'valid', 'full', 'half', "
        "an int or a tuple of ints")


def _conv(input, filters, spatial, border_mode, subsample, filter_flip, filter_dilation,
          num_groups):
    if filter_flip:
        # Theano's conv2d is a true convolution; the engine's op is a cross-correlation.
        flip = (slice(None), slice(None)) + (slice(None, None, -1),) * spatial
        filters = filters[flip]
    mode, begin, end = _border(border_mode, spatial)
    return _core.conv(input, filters, list(subsample), mode, begin, end, list(filter_dilation),
                      num_groups)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1), num_groups=1):
    """Theano's conv2d: input (N, C, H, W), filters (O, C / groups, kH, kW). filter_flip=True
    (Theano's default) convolves; False cross-correlates, as most frameworks do."""
    del input_shape, filter_shape  # the types carry the static shapes
    return _conv(input, filters, 2, border_mode, subsample, filter_flip, filter_dilation,
                 num_groups)


def conv3d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1, 1), filter_flip=True, filter_dilation=(1, 1, 1), num_groups=1):
    """conv2d over (N, C, D, H, W) inputs and (O, C / groups, kD, kH, kW) filters."""
    del input_shape, filter_shape
    return _conv(input, filters, 3, border_mode, subsample, filter_flip, filter_dilation,
                 num_groups)


def _normalized_axes(axes, ndim):
    """Theano's axes argument as a sorted tuple: 'per-activation' is (0,), 'spatial' every axis
    but 1, or a sequence of axes."""
    if axes == "per-activation":
        axes = (0,)
    elif axes == "spatial":
        axes = (0,) + tuple(range(2, ndim))
    elif isinstance(axes, (tuple, list)) or hasattr(axes, "__array__"):
        axes = tuple(int(axis) for axis in axes)
    else:
        raise _core.InvalidArgumentError(
            f"batch normalisation: axes={axes!r}; expected 'per-activation', 'spatial' or a "
            "tuple of axes")
    axes = tuple(sorted(set(axes)))
    if not axes:
        raise _core.InvalidArgumentError(
            "batch normalisation: there must be at least one normalisation axis")
    if axes[0] < 0 or axes[-1] >= ndim:
        raise _core.InvalidArgumentError(
            f"batch normalisation: axes {axes} must lie in [0, {ndim}) for an input of rank "
            f"{ndim}")
    return list(axes)


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """Theano's T.nnet.batch_normalization: (inputs - mean) * (gamma / std) + beta, elementwise
    with the given statistics (any broadcastable shapes). mode is accepted for Theano's sake; the
    engine fuses the expression either way."""
    if mode not in ("low_mem", "high_mem"):
        raise _core.InvalidArgumentError(
            f"batch_normalization: mode {mode!r}; expected 'low_mem' or 'high_mem'")
    return _core.batch_normalization(inputs, gamma, beta, mean, std)


class _BatchNorm:
    """T.nnet.bn: batch normalisation over any axes (Theano's axes: 'per-activation', 'spatial'
    or a tuple). The parameters have x's rank with extent 1 on the normalised axes, or one axis per
    axis not normalised (vectors of one value per channel for 'spatial'); the statistics returned
    have the parameters' form. The default here is axes='spatial' (Theano's is
    'per-activation')."""

    batch_normalization = staticmethod(batch_normalization)

    @staticmethod
    def batch_normalization_train(inputs, gamma, beta, axes="spatial", epsilon=1e-4,
                                  running_average_factor=0.1, running_mean=None,
                                  running_var=None):
        """Returns (out, mean, invstd, new_running_mean, new_running_var); pass the last two as
        updates of running_mean and running_var."""
        normalized = _normalized_axes(axes, _core.as_variable(inputs).ndim)
        if running_mean is None or running_var is None:
            raise _core.InvalidArgumentError(
                "batch_normalization_train: running_mean and running_var are required")
        out, mean, var, new_mean, new_var = _core.batch_norm_train(
            inputs, gamma, beta, running_mean, running_var, epsilon, running_average_factor,
            normalized)
        invstd = _core.reciprocal(_core.sqrt(var + epsilon))
        return out, mean, invstd, new_mean, new_var

    @staticmethod
    def batch_normalization_test(inputs, gamma, beta, mean, var, axes="spatial", epsilon=1e-4):
        normalized = _normalized_axes(axes, _core.as_variable(inputs).ndim)
        return _core.batch_norm_inference(inputs, gamma, beta, mean, var, epsilon, normalized)


bn = _BatchNorm()
