# SPDX-License-Identifier: Apache-2.0
"""ts.function, ts.shared and ts.grad with Theano's signatures."""
from collections.abc import Mapping

from . import _core
from .configuration import config
from .profiling import ProfileStats
from .tensor import shared_randomstreams

_MODES = (None, "FAST_RUN", "FAST_COMPILE")


def _pairs(value, what):
    if value is None:
        return []
    if isinstance(value, Mapping):
        return list(value.items())
    try:
        return [tuple(pair) for pair in value]
    except TypeError:
        raise _core.InvalidArgumentError(
            f"function: {what} must be a dict or a list of pairs, got {type(value).__name__}"
        ) from None


def function(inputs, outputs=None, mode=None, updates=None, givens=None, name=None,
             profile=None, allow_gc=None, excluded_rewrites=None):
    """Compiles a callable from symbolic inputs to outputs (Theano's theano.function).

    outputs: one Variable (the call returns one array) or a list (the call returns a list).
    updates: {shared: new value} or [(shared, new value)], applied after each call.
    givens: {variable: replacement}: the graph is compiled with each key replaced.
    profile: True to profile this function, a ProfileStats to add its profile to a shared one;
    None follows ts.config.profile. The profile is then ``f.profile``.
    """
    if mode not in _MODES:
        raise _core.UnsupportedError(
            f"function: mode '{mode}' is not supported; expected one of {_MODES}")
    single_output = isinstance(outputs, _core.Variable)
    if outputs is None:
        output_list = []
    elif single_output:
        output_list = [outputs]
    else:
        output_list = list(outputs)
    global_profile = config.profile
    collector = None
    if isinstance(profile, ProfileStats):
        collector = profile.collector
    profiled = bool(profile) or global_profile
    options = {"profile_memory": config.profile_memory}
    if allow_gc is not None:
        options["allow_gc"] = bool(allow_gc)
    if excluded_rewrites:
        options["excluded_rewrites"] = list(excluded_rewrites)
    compiled = _core.function(
        list(inputs), output_list, single_output, _pairs(updates, "updates"),
        _pairs(givens, "givens"), name or "", collector, profiled, global_profile, options,
        shared_randomstreams.default_updates())
    compiled.profile = ProfileStats(collector=compiled.collector) if profiled else None
    return compiled


def shared(value, name=None, dtype=None, strict=False, fixed_shape=False):
    """A shared variable holding a copy of `value` (a NumPy array or number).

    A Python float gives float64 and an int int64 (use dtype= or a typed array for others).
    fixed_shape=True fixes the shape, so that axes of extent 1 broadcast.
    """
    del strict  # values are always checked against the variable's dtype and rank
    return _core.shared(value, name or "", dtype, fixed_shape)


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """Symbolic gradient of the scalar `cost` with respect to `wrt` (a Variable or a list).

    Returns a Variable for a single wrt, a list for a list. disconnected_inputs: 'raise' (an
    error naming the variable), 'warn' or 'ignore' (zeros). consider_constant: Variables through
    which no gradient flows (as in Theano).
    """
    single = isinstance(wrt, _core.Variable)
    grads = _core.grad(cost, [wrt] if single else list(wrt), disconnected_inputs,
                       list(consider_constant or []))
    return grads[0] if single else grads
