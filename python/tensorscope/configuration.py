# SPDX-License-Identifier: Apache-2.0
"""ts.config: Theano's config object over the engine's flags.

The profile flags have TSCOPE_FLAGS's names (``ts.config.profile``, ``ts.config.profile_memory``,
``ts.config.profiling.n_apply``, ...), start from TSCOPE_FLAGS, and are checked by the engine's
own parser: a bad name or value raises BadFlagError listing the valid ones. ``floatX`` (the
dtype of inputs made without one) and ``on_unused_input`` (function's default for it) are the
settings that live in Python.
"""
from . import _core

_PYTHON_SETTINGS = {
    "floatX": ("float32", "float64"),
    "on_unused_input": ("raise", "warn", "ignore"),
}


def _to_python(text):
    if text in ("true", "false"):
        return text == "true"
    if text.lstrip("-").isdigit():
        return int(text)
    return text


def _to_flag(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Section:
    """Flags under a dotted prefix: ``config.profiling.n_apply`` is ``profiling.n_apply``."""

    def __init__(self, prefix):
        object.__setattr__(self, "_prefix", prefix)

    def _flag(self, name):
        return self._prefix + name

    def __getattr__(self, name):
        flags = _core.flags()
        flag = self._flag(name)
        if flag in flags:
            return _to_python(flags[flag])
        if any(key.startswith(flag + ".") for key in flags):
            return _Section(flag + ".")
        raise AttributeError(f"ts.config has no flag '{flag}'; flags: {', '.join(sorted(flags))}")

    def __setattr__(self, name, value):
        _core.set_flag(self._flag(name), _to_flag(value))

    def __dir__(self):
        return sorted({key[len(self._prefix):].split(".")[0] for key in _core.flags()
                       if key.startswith(self._prefix)})


class Config(_Section):
    def __init__(self):
        super().__init__("")
        object.__setattr__(self, "floatX", "float64")
        object.__setattr__(self, "on_unused_input", "raise")

    def __setattr__(self, name, value):
        if name not in _PYTHON_SETTINGS:
            super().__setattr__(name, value)
            return
        if value not in _PYTHON_SETTINGS[name]:
            raise _core.BadFlagError(
                f"{name} is '{value}'; expected one of {', '.join(_PYTHON_SETTINGS[name])}")
        object.__setattr__(self, name, value)

    def flags(self):
        """Every engine flag, name -> value, as TSCOPE_FLAGS spells them."""
        return {name: _to_python(value) for name, value in _core.flags().items()}


config = Config()
