# SPDX-License-Identifier: Apache-2.0
"""ts.function, ts.In, ts.Out, ts.shared and ts.grad with Theano's signatures."""
from collections.abc import Mapping

from . import _core
from .configuration import config
from .profiling import ProfileStats
from .tensor import shared_randomstreams

_MODES = (None, "FAST_RUN", "FAST_COMPILE")
_UNUSED_INPUT_POLICIES = ("raise", "warn", "ignore")


class In:
    """A function input with Theano's settings (theano.In).

    value: a default, which makes the argument optional. name: the keyword that names the
    argument (the variable's name unless given; autoname=False leaves it positional only).
    strict: the argument must be an ndarray of exactly the input's dtype. allow_downcast: as
    function's allow_input_downcast, for this input (None: the function's). borrow: accepted for
    Theano's sake; the engine never copies a C-contiguous argument of the right dtype, and never
    writes into one. update, mutable and implicit (inputs that carry state between calls) are not
    supported: use a shared variable and updates.
    """

    def __init__(self, variable, name=None, value=None, update=None, mutable=None, strict=False,
                 allow_downcast=None, autoname=True, implicit=None, borrow=None, shared=False):
        if not isinstance(variable, _core.Variable):
            raise _core.TypeMismatchError(
                f"In: expected a Variable, got {type(variable).__name__}")
        if update is not None or mutable or implicit or shared:
            raise _core.UnsupportedError(
                "In: update, mutable, implicit and shared are not supported; keep state in a "
                "ts.shared variable and pass its new value in updates")
        if allow_downcast not in (None, True, False):
            raise _core.InvalidArgumentError(
                f"In: allow_downcast is {allow_downcast!r}; expected None, True or False")
        self.variable = variable
        self.name = name if name is not None else (variable.name if autoname else None)
        self.value = value
        self.strict = bool(strict)
        self.allow_downcast = allow_downcast
        self.borrow = borrow

    def __repr__(self):
        return f"In({self.variable!r}, name={self.name!r}, value={self.value!r})"


class Out:
    """A function output with Theano's settings (theano.Out). borrow is accepted for Theano's
    sake: results are always handed over without a copy, and the engine never writes into a
    result the caller still holds."""

    def __init__(self, variable, borrow=False):
        if not isinstance(variable, _core.Variable):
            raise _core.TypeMismatchError(
                f"Out: expected a Variable, got {type(variable).__name__}")
        self.variable = variable
        self.borrow = bool(borrow)

    def __repr__(self):
        return f"Out({self.variable!r}, borrow={self.borrow})"


def _input_specs(inputs, allow_input_downcast):
    """The Variables and, per input, (keyword, default, has default, cast) for the extension."""
    if allow_input_downcast not in (None, True, False):
        raise _core.InvalidArgumentError(
            f"function: allow_input_downcast is {allow_input_downcast!r}; expected None, True or "
            "False")
    variables = []
    specs = []
    for item in inputs:
        spec = item if isinstance(item, In) else In(item) if isinstance(item, _core.Variable) \
            else None
        if spec is None:
            raise _core.TypeMismatchError(
                f"function: an input must be a Variable or a ts.In, got {type(item).__name__}")
        downcast = allow_input_downcast if spec.allow_downcast is None else spec.allow_downcast
        cast = "strict" if spec.strict else {None: "floatx", False: "safe", True: "any"}[downcast]
        variables.append(spec.variable)
        specs.append((spec.name or "", spec.value, spec.value is not None, cast))
    return variables, specs


def _output_variable(output):
    return output.variable if isinstance(output, Out) else output


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
             profile=None, allow_gc=None, excluded_rewrites=None, allow_input_downcast=None,
             on_unused_input=None):
    """Compiles a callable from symbolic inputs to outputs (Theano's theano.function).

    inputs: Variables or ts.In (defaults, keyword names, per-input casting). The call takes the
    arguments positionally or by the inputs' names.
    outputs: one Variable or ts.Out (the call returns one array) or a list (the call returns a
    list).
    updates: {shared: new value} or [(shared, new value)], applied after each call.
    givens: {variable: replacement}: the graph is compiled with each key replaced.
    profile: True to profile this function, a ProfileStats to add its profile to a shared one;
    None follows ts.config.profile. The profile is then ``f.profile``.
    allow_input_downcast: True casts every argument to its input's dtype; False casts only where
    no precision can be lost (an int32 array into a float64 input, not a float64 array into a
    float32 one); None (Theano's default) is False but also lets a Python float become floatX.
    on_unused_input: what an input that no output or update reads is: 'raise' (an error),
    'warn' or 'ignore'; None follows ts.config.on_unused_input ('raise', as in Theano).
    """
    if mode not in _MODES:
        raise _core.UnsupportedError(
            f"function: mode '{mode}' is not supported; expected one of {_MODES}")
    if on_unused_input is None:
        on_unused_input = config.on_unused_input
    if on_unused_input not in _UNUSED_INPUT_POLICIES:
        raise _core.InvalidArgumentError(
            f"function: on_unused_input is {on_unused_input!r}; expected one of "
            f"{', '.join(_UNUSED_INPUT_POLICIES)}")
    input_variables, input_specs = _input_specs(inputs, allow_input_downcast)
    single_output = isinstance(outputs, (_core.Variable, Out))
    if outputs is None:
        output_list = []
    elif single_output:
        output_list = [_output_variable(outputs)]
    else:
        output_list = [_output_variable(output) for output in outputs]
    global_profile = config.profile
    collector = None
    if isinstance(profile, ProfileStats):
        collector = profile.collector
    profiled = bool(profile) or global_profile
    options = {"profile_memory": config.profile_memory, "float_x": config.floatX,
               "on_unused_input": on_unused_input}
    if allow_gc is not None:
        options["allow_gc"] = bool(allow_gc)
    if excluded_rewrites:
        options["excluded_rewrites"] = list(excluded_rewrites)
    compiled = _core.function(
        input_variables, output_list, single_output, _pairs(updates, "updates"),
        _pairs(givens, "givens"), name or "", collector, profiled, global_profile, options,
        shared_randomstreams.default_updates(), input_specs)
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
