# SPDX-License-Identifier: Apache-2.0
"""Tensorscope from Python, with Theano's names.

    import tensorscope as ts
    import tensorscope.tensor as T

    x = T.matrix("x")
    w = ts.shared(numpy.zeros((784, 10)), "w")
    cost = T.mean(T.sqr(T.dot(x, w)))
    train = ts.function([x], cost, updates={w: w - 0.1 * ts.grad(cost, w)}, profile=True)
    train(batch)
    train.profile.summary()

Every graph node records the line of the user's script that built it, so errors and profiles
point there. docs/python.md lists what exists and Theano's names for it.
"""
import os as _os

from . import _core

_core.set_package_dir(_os.path.dirname(_os.path.abspath(__file__)))

from ._core import (  # noqa: E402  (the package directory must be set before any node is built)
    BadFlagError,
    IndexOutOfRangeError,
    InternalError,
    InvalidArgumentError,
    IoError,
    NotDifferentiableError,
    OutOfMemoryError,
    ParseError,
    ShapeMismatchError,
    TensorscopeError,
    TypeMismatchError,
    UnsupportedError,
    Variable,
    __version__,
)
from .configuration import config  # noqa: E402
from .compile import In, Out, function, grad, shared  # noqa: E402
from .loops import scan, until  # noqa: E402
from . import loops as scan_module  # noqa: E402  (Theano's theano.scan_module.until)
from .profiling import ProfileStats  # noqa: E402
from . import profiling as profile  # noqa: E402
from . import onnx, tensor  # noqa: E402

__all__ = [
    "BadFlagError", "In", "IndexOutOfRangeError", "InternalError", "InvalidArgumentError",
    "IoError", "NotDifferentiableError", "Out", "OutOfMemoryError", "ParseError", "ProfileStats",
    "ShapeMismatchError", "TensorscopeError", "TypeMismatchError", "UnsupportedError", "Variable",
    "config", "function", "grad", "onnx", "profile", "scan", "scan_module", "shared", "tensor",
    "until",
]
