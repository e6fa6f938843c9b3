# SPDX-License-Identifier: Apache-2.0
"""Theano's RandomStreams over the engine's counter-based generator (tscope/ops/random.h).

    srng = RandomStreams(seed=42)
    noise = srng.normal((64, 784), std=0.1, dtype="float32")
    f = ts.function([x], x + noise)   # each call draws fresh noise

As in Theano, a function that uses a draw advances its state after each call (the draw's default
update); the same seed gives the same samples in every run. A size may be symbolic:
``srng.normal(x.shape)`` or ``srng.uniform((n, 3))`` with n a scalar Variable draw a shape read
when the function runs.
"""
import weakref

from .. import _core as _engine
from ..configuration import config

# Every live stream, so that tensorscope.function can add the default updates of the draws it uses.
_streams = weakref.WeakSet()


def default_updates():
    """(state, new state) pairs of every draw of every live stream."""
    pairs = []
    for stream in list(_streams):
        pairs += stream.updates()
    return pairs


class RandomStreams:
    def __init__(self, seed=None):
        self._stream = _engine.RandomStream(0 if seed is None else int(seed))
        _streams.add(self)

    def uniform(self, size, low=0.0, high=1.0, dtype=None):
        return self._stream.uniform(size, low, high, dtype or config.floatX)

    def normal(self, size, avg=0.0, std=1.0, dtype=None):
        return self._stream.normal(size, avg, std, dtype or config.floatX)

    def random_integers(self, size, low=0, high=1, dtype="int64"):
        """Integers in [low, high], both ends included (Theano's random_integers)."""
        return self._stream.integers(size, low, high + 1, dtype)

    def integers(self, size, low, high, dtype="int64"):
        """Integers in [low, high)."""
        return self._stream.integers(size, low, high, dtype)

    def binomial(self, size, n=1, p=0.5, dtype="int64"):
        """Bernoulli draws (n=1): 1 with probability p."""
        if n != 1:
            raise _engine.UnsupportedError("binomial: only n=1 (Bernoulli) is supported")
        return _engine.cast(_engine.lt(self.uniform(size, dtype="float64"), p), dtype)

    def dropout(self, x, p, training=True):
        """Inverted dropout of x (kept with probability 1 - p, scaled by 1 / (1 - p))."""
        return self._stream.dropout(x, p, training)

    def seed(self, seed):
        """Restarts every draw of this stream as a fresh RandomStreams(seed) would."""
        self._stream.reseed(int(seed))

    def updates(self):
        return self._stream.state_updates()
