# SPDX-License-Identifier: Apache-2.0
"""ts.scan with Theano's signature (docs/scan.md describes the loop)."""
from collections import OrderedDict
from collections.abc import Mapping

from . import _core


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _sequence(entry):
    if isinstance(entry, dict):
        return entry["input"], [int(tap) for tap in entry.get("taps", [0])]
    return entry, [0]


def _output(entry):
    if entry is None:
        return None, []
    if isinstance(entry, dict):
        initial = entry.get("initial")
        if initial is None:
            return None, []
        return initial, [int(tap) for tap in entry.get("taps", [-1])]
    return entry, [-1]


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         go_backwards=False, name=None):
    """A loop (Theano's theano.scan): `fn` is called once with symbolic arguments, in order
    every sequence's taps, every fed-back output's taps, then the non-sequences, and returns one
    Variable per output, or, as in Theano, (outputs, updates) or an updates dict alone, where
    updates maps shared variables to their new values after each step. Returns (outputs,
    updates): outputs is one Variable (several: a list), each stacked along a new axis 0; updates
    is an OrderedDict of every shared variable the step updates, its own and its random draws'
    states, to its value after the last step. Pass it to function(updates=...); random states
    are also applied by default, as Theano's default updates are.

    sequences: Variables, or dicts {"input": x, "taps": [-1, 0]}.
    outputs_info: per output an initial state, None (not fed back) or
    {"initial": h0, "taps": [-2, -1]}; default: no output is fed back.
    n_steps: an int or an integer scalar Variable; default: from the sequences.
    """
    sequence_list = [_sequence(entry) for entry in _as_list(sequences)]
    output_list = [_output(entry) for entry in _as_list(outputs_info)]
    if not output_list:
        # Theano's default: every output fn returns is computed, none fed back.
        output_list = [(None, [])] * _count_outputs(fn, sequence_list, non_sequences)
    outputs, updates = _core.scan(lambda *args: _step_result(fn(*args)), sequence_list,
                                  output_list, _as_list(non_sequences), n_steps,
                                  bool(go_backwards), name or "")
    return (outputs[0] if len(outputs) == 1 else list(outputs)), OrderedDict(updates)


def _step_result(result):
    """Theano's step results (outputs; (outputs, updates) in either order; updates alone) as
    (list of outputs, list of (shared, new value) pairs)."""
    if isinstance(result, Mapping):
        return [], list(result.items())
    if isinstance(result, tuple) and len(result) == 2:
        first, second = result
        if isinstance(second, Mapping):
            return _as_list(first), list(second.items())
        if isinstance(first, Mapping):
            return _as_list(second), list(first.items())
    return _as_list(result), []


def _count_outputs(fn, sequence_list, non_sequences):
    """How many outputs fn returns, from a call on throwaway placeholders of the right types."""
    arguments = []
    for value, taps in sequence_list:
        row = value[0]
        arguments.extend(row for _ in taps)
    arguments.extend(_as_list(non_sequences))
    return len(_step_result(fn(*arguments))[0])
