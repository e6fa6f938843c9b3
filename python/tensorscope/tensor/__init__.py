# SPDX-License-Identifier: Apache-2.0
"""tensorscope.tensor (``import tensorscope.tensor as T``): Theano's tensor module.

Constructors (T.matrix("x"), T.fvector(), ...), the tensor functions (T.dot, T.exp, T.sum, ...)
and T.nnet. Each maps onto one engine builder; no math is done in Python. Variables also have
Python operators and Theano's methods (x.T, x.sum(axis=1), x[1:, 0], x.dimshuffle(0, "x"), ...).
"""
from .. import _core
from ..configuration import config
from . import nnet, shared_randomstreams, signal  # noqa: F401

Variable = _core.Variable
TensorVariable = _core.Variable


def _input(dims, name, dtype):
    return _core.input(dtype or config.floatX, list(dims), name or "")


# Theano's constructors: rank and which axes broadcast (extent 1).
_KINDS = {
    "scalar": (),
    "vector": (None,),
    "row": (1, None),
    "col": (None, 1),
    "matrix": (None, None),
    "tensor3": (None,) * 3,
    "tensor4": (None,) * 4,
    "tensor5": (None,) * 5,
}
# Theano's one-letter dtype prefixes (b int8, i int32, l int64, f float32, d float64).
_PREFIXES = {"b": "int8", "i": "int32", "l": "int64", "f": "float32", "d": "float64"}


def _constructor(kind, dims, fixed_dtype=None):
    if fixed_dtype is None:
        def make(name=None, dtype=None):
            return _input(dims, name, dtype)
        make.__doc__ = f"A {kind} input (dtype: ts.config.floatX unless given)."
    else:
        def make(name=None):
            return _input(dims, name, fixed_dtype)
        make.__doc__ = f"A {fixed_dtype} {kind} input."
    return make


for _kind, _dims in _KINDS.items():
    globals()[_kind] = _constructor(_kind, _dims)
    for _prefix, _dtype in _PREFIXES.items():
        globals()[_prefix + _kind] = _constructor(_kind, _dims, _dtype)


def tensor(dtype=None, broadcastable=None, name=None, shape=None):
    """An input of any rank: `broadcastable` (Theano) marks axes of extent 1; `shape` gives the
    static extents (None where unknown)."""
    if shape is None:
        shape = [1 if flag else None for flag in (broadcastable or ())]
    return _input(shape, name, dtype)


def constant(value, name=None, dtype=None):
    return _core.constant(value, name or "", dtype)


def as_tensor_variable(value):
    return _core.as_variable(value)


# Elementwise: one engine builder each.
neg = _core.neg
abs_ = _core.abs
abs = _core.abs  # noqa: A001 (shadows the builtin inside this module only, as in Theano)
sgn = _core.sgn
sqr = _core.sqr
sqrt = _core.sqrt
inv = _core.reciprocal
reciprocal = _core.reciprocal
exp = _core.exp
exp2 = _core.exp2
expm1 = _core.expm1
log = _core.log
log2 = _core.log2
log10 = _core.log10
log1p = _core.log1p
tanh = _core.tanh
sin = _core.sin
cos = _core.cos
erf = _core.erf
floor = _core.floor
ceil = _core.ceil
round = _core.round  # noqa: A001
add = _core.add
sub = _core.sub
mul = _core.mul
true_div = _core.true_div
int_div = _core.int_div
mod = _core.mod
pow = _core.pow  # noqa: A001
maximum = _core.maximum
minimum = _core.minimum
clip = _core.clip
eq = _core.eq
neq = _core.neq
lt = _core.lt
gt = _core.gt
le = _core.le
ge = _core.ge
and_ = _core.logical_and
or_ = _core.logical_or
xor = _core.logical_xor
invert = _core.logical_not
switch = _core.switch
where = _core.switch
cast = _core.cast
sigmoid = _core.sigmoid
softplus = _core.softplus

# Linear algebra.
dot = _core.dot
batched_dot = _core.batched_dot

# Reductions: x, axis=None, keepdims=False.
sum = _core.sum  # noqa: A001
mean = _core.mean
max = _core.max  # noqa: A001
min = _core.min  # noqa: A001
prod = _core.prod
any = _core.any  # noqa: A001
all = _core.all  # noqa: A001
var = _core.var
std = _core.std
argmax = _core.argmax
argmin = _core.argmin

# Shapes.
shape = _core.shape
transpose = _core.transpose
flatten = _core.flatten
zeros_like = _core.zeros_like
ones_like = _core.ones_like


def reshape(x, newshape, ndim=None):
    del ndim  # the target's length gives it
    return _core.reshape(x, newshape)


def zeros(shape, dtype=None):
    return _core.alloc(0, shape, dtype or config.floatX)


def ones(shape, dtype=None):
    return _core.alloc(1, shape, dtype or config.floatX)


def alloc(value, *shape):
    return _core.alloc(value, shape, None)


def arange(start, stop=None, step=1, dtype=None):
    """Theano's T.arange: numpy.arange over Python numbers or scalar Variables. With one argument
    it is the stop. dtype: the bounds' promotion, int64 for integers, unless given. The length is
    known only when the function runs unless every bound is a constant."""
    if stop is None:
        start, stop = 0, start
    return _core.arange(start, stop, step, dtype)


def nonzero(a, return_matrix=False):
    """The coordinates of a's nonzero elements: one int64 vector per axis (a tuple), or with
    return_matrix=True the (a.ndim, n) matrix."""
    return as_tensor_variable(a).nonzero(return_matrix)


def flatnonzero(a):
    """The positions of a's nonzero elements in a.flatten()."""
    return as_tensor_variable(a).flatten().nonzero()[0]


def nonzero_values(a):
    """a's nonzero elements, in a.flatten()'s order."""
    flat = as_tensor_variable(a).flatten()
    return flat[flat.nonzero()[0]]


def concatenate(tensor_list, axis=0):
    return _core.join(axis, tensor_list)


def join(axis, *tensors):
    return _core.join(axis, tensors)


def stack(*tensors, axis=0):
    """T.stack([a, b], axis=0) or Theano's older T.stack(a, b)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return _core.stack(list(tensors), axis)


def _indexed(subtensor, what):
    source = getattr(subtensor, "_tscope_index", None)
    if source is None:
        raise _core.InvalidArgumentError(
            f"{what}: the first argument must be an indexed variable such as x[1:3] or x[idx]")
    return source


def set_subtensor(subtensor, value):
    """T.set_subtensor(x[key], y): a copy of x with x[key] replaced by y."""
    x, key = _indexed(subtensor, "set_subtensor")
    return _core.set_subtensor(x, key, value)


def inc_subtensor(subtensor, value):
    """T.inc_subtensor(x[key], y): a copy of x with y added to x[key]."""
    x, key = _indexed(subtensor, "inc_subtensor")
    return _core.inc_subtensor(x, key, value)

