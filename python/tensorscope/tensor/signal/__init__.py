# SPDX-License-Identifier: Apache-2.0
"""tensorscope.tensor.signal (T.signal): Theano's signal module; pooling is in pool."""
from . import pool  # noqa: F401
