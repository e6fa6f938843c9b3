# SPDX-License-Identifier: Apache-2.0
"""Profiles as Python objects (ts.profile).

``f.profile`` of a function compiled with profile=True is a ProfileStats; several functions given
one ProfileStats add up in it, as in Theano. ``summary()`` prints the same text report as the C++
side and the CLI; ``to_json()`` writes the versioned JSON that ``tscope report`` and ``load``
read back; ``apply_rows()`` returns the Apply table's data as a list of dicts.
"""
import multiprocessing.util
import sys

from . import _core

Profile = _core.Profile


def _print(text, file):
    (sys.stdout if file is None else file).write(text)


class ProfileStats:
    """Where one or several functions accumulate their profile (Theano's ProfileStats)."""

    def __init__(self, title="", collector=None):
        self.collector = collector if collector is not None else _core.ProfileCollector(title)

    def snapshot(self):
        """The profile so far, as a Profile (waits for calls in flight)."""
        return self.collector.snapshot()

    def summary(self, file=None):
        """Prints the text report (to sys.stdout, or `file`)."""
        _print(self.text(), file)

    def text(self):
        return self.snapshot().text()

    def to_json(self, path=None):
        """The JSON form; written to `path` when given."""
        text = self.snapshot().to_json()
        if path is not None:
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        return text

    def apply_rows(self):
        return self.snapshot().apply_rows()

    def function_rows(self):
        return self.snapshot().function_rows()


def _summary(profile, file=None):
    _print(profile.text(), file)


Profile.summary = _summary


def load(path):
    """The profile saved at `path` (to_json or TSCOPE_FLAGS profiling.destination=*.json).

    A file holding several functions' profiles gives their sum; load_all gives each.
    """
    profiles = _core.load_profiles(path)
    return profiles[0] if len(profiles) == 1 else _core.sum_profiles(profiles)


def load_all(path):
    return _core.load_profiles(path)


# Host zones, steps and epochs (docs/host_profiling.md): the same recording as the C++ macros.
# Zones record while zones are on: TSCOPE_FLAGS=profile=true or set_zones_enabled(True).
mark_step = _core.mark_step
mark_epoch = _core.mark_epoch
set_zones_enabled = _core.set_zones_enabled


class zone:
    """A zone around a block, ``with ts.profile.zone("load batch"):``, or around every call of
    a function, ``@ts.profile.zone("voxelize")``. Its site is the caller's file:line."""

    def __init__(self, name, input_wait=False):
        self._name = name
        self._input_wait = input_wait
        self._tokens = []  # one per open entry: the same object may be entered again, nested

    def __enter__(self):
        site = _core.zone_site(self._name, self._input_wait)
        self._tokens.append(_core.zone_begin(site, self._input_wait))
        return self

    def __exit__(self, *exc_info):
        _core.zone_end(self._tokens.pop(), self._input_wait)
        return False

    def __call__(self, function):
        def wrapped(*args, **kwargs):
            with zone(self._name, self._input_wait):
                return function(*args, **kwargs)

        wrapped.__name__ = getattr(function, "__name__", "zone")
        wrapped.__doc__ = getattr(function, "__doc__", None)
        return wrapped


def input_wait(name):
    """A zone where the training loop waits for its next batch: its time is the step's input
    wait, which the report's input-bound verdict reads."""
    return zone(name, input_wait=True)


# Worker processes (docs/host_profiling.md, "Worker processes"): a child started by spawn writes
# its shard at exit like any program; a child of fork or forkserver ends with os._exit after
# multiprocessing's exit hooks, so one of them writes it. multiprocessing clears the hooks
# inherited through fork when a child starts, then runs its after-fork callbacks: the hook is
# registered from there.
def _write_worker_shard():
    if _core.is_worker_process():
        _core.write_global_profiles()


def _register_worker_shard_hook(_owner):
    # The lowest priority: after the finalizers that the program registered itself.
    multiprocessing.util.Finalize(None, _write_worker_shard, exitpriority=-(2**31))


class _AfterForkOwner:
    """Keeps the after-fork callback registered (the registry holds its owner weakly)."""


_after_fork_owner = _AfterForkOwner()
multiprocessing.util.register_after_fork(_after_fork_owner, _register_worker_shard_hook)
