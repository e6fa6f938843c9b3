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


class until:  # noqa: N801: Theano's name (theano.scan_module.until)
    """A step's stop condition: return ``outputs, until(condition)`` (with updates too, in any
    order) and the loop stops after the first step where the condition holds."""

    def __init__(self, condition):
        self.condition = condition


def _step_result(result):
    """Theano's step results (outputs; updates; an until condition; any two or three of them in
    a tuple, in any order) as (list of outputs, list of (shared, new value) pairs, condition or
    None)."""
    if isinstance(result, until):
        return [], [], result.condition
    if isinstance(result, Mapping):
        return [], list(result.items()), None
    if isinstance(result, tuple) and 2 <= len(result) <= 3:
        parts = list(result)
        conditions = [part for part in parts if isinstance(part, until)]
        updates = [part for part in parts if isinstance(part, Mapping)]
        if conditions or updates:
            rest = [part for part in parts if not isinstance(part, (until, Mapping))]
            if len(conditions) <= 1 and len(updates) <= 1 and len(rest) <= 1:
                return (_as_list(rest[0]) if rest else [],
                        list(updates[0].items()) if updates else [],
                        conditions[0].condition if conditions else None)
    return _as_list(result), [], None


def _count_outputs(fn, sequence_list, non_sequences):
    """How many outputs fn returns, from a call on throwaway placeholders of the right types."""
    arguments = []
    for value, taps in sequence_list:
        row = value[0]
        arguments.extend(row for _ in taps)
    arguments.extend(_as_list(non_sequences))
    return len(_step_result(fn(*arguments))[0])
