// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Loops, after Theano's scan: a step function applied over sequences with recurrent states.
///
///   // h[t] = tanh(x[t] W + h[t-1] U), for every t of the sequence x (steps x batch x features)
///   ScanResult rnn = scan(
///       [&](const std::vector<Variable>& in) {   // x[t], h[t-1]
///         return std::vector<Variable>{tanh(dot(in[0], W) + dot(in[1], U))};
///       },
///       {x}, {h0});
///   Variable h = rnn.outputs[0];               // (steps, batch, hidden): h[0] .. h[steps-1]
///   auto grads = grad(sum(h), {W, U});         // through the loop: a scan running backwards
///
/// The step function is called once, when scan() runs, with placeholder Variables in this order:
/// every sequence's taps (for each sequence, its taps in increasing order), every fed-back
/// output's taps (likewise), then the non-sequences. It returns one Variable per outputs_info
/// entry, in that order. Shared variables and other values the step reads from the enclosing graph
/// are found automatically and passed to the loop as extra non-sequences (values computed outside
/// the step run once, before the loop).
///
/// Semantics (Theano's):
/// - A sequence tap k reads `seq[t + k - min_tap]` at step t; the number of steps defaults to the
///   shortest sequence's length less its taps' span (max_tap - min_tap).
/// - An output with an initial value is fed back: tap -k reads its value k steps earlier. With the
///   single tap -1, `initial` is the state itself; with other taps its axis 0 holds the
///   max(-tap) values before step 0, oldest first.
/// - Each output comes back stacked: (steps, ...), the value of every step in order.
/// - `n_steps` (a number or an int64 scalar Variable) fixes the step count; every sequence must
///   then be long enough. `go_backwards` runs the loop over the reversed sequences (stacked outputs
///   stay in iteration order).
/// - `until` makes a while loop (Theano's scan_module.until): the step returns one more Variable,
///   a scalar condition; the loop stops after the first step where it is true (non-zero), or
///   after n_steps (or the sequences' length), whichever comes first. The outputs then hold the
///   steps that ran.
/// - Updates (Theano's scan updates): a step may also return updates of shared variables
///   (ScanStep::updates: a counter, a running value), and every random draw made inside the step
///   updates its stream's state. Each updated shared variable is carried from step to step: reads
///   of it inside the step see the previous step's new value, step 0 reads its value before the
///   call. ScanResult::updates holds, per updated shared variable, its value after the last step;
///   pass them to function() so they take effect after each call. The draws' entries of their
///   RandomStream's state_updates() are set to the same final states, so passing those instead
///   (or both) works too. A loop with updates must run at least one step.
/// Errors name the scan: a step output whose dtype, rank or static shape differs from its initial
/// state, a step whose output shape changes between steps, a sequence too short for its taps and
/// the step count, a negative step count, and an update of a non-shared variable, of one shared
/// variable twice, or with a value of another type.
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "tscope/graph/provenance.h"
#include "tscope/graph/variable.h"
#include "tscope/ops/shape.h"
#include "tscope/runtime/function.h"

#pragma GCC visibility push(default)

namespace tscope {

/// One sequence and the taps the step reads from it (default: the current element).
struct ScanSequence {
  ScanSequence(const Variable& sequence) : value(sequence) {}  // NOLINT: plain sequences
  ScanSequence(const Variable& sequence, std::vector<std::int64_t> sequence_taps)
      : value(sequence), taps(std::move(sequence_taps)) {}
  Variable value;
  std::vector<std::int64_t> taps{0};
};

/// One output of the step: fed back from `initial` through `taps` (negative), or, with no
/// initial value (ScanOutput::none()), computed from the other inputs only.
struct ScanOutput {
  ScanOutput(const Variable& initial_state) : initial(initial_state) {}  // NOLINT: plain states
  ScanOutput(const Variable& initial_state, std::vector<std::int64_t> state_taps)
      : initial(initial_state), taps(std::move(state_taps)) {}
  [[nodiscard]] static ScanOutput none() { return ScanOutput(Variable(), {}); }
  Variable initial;
  std::vector<std::int64_t> taps{-1};
};

struct ScanOptions {
  /// The step count; absent: from the sequences (at least one sequence is then needed).
  std::optional<DimArg> n_steps;
  /// Names the loop in printed nodes and profiles: "Scan{name}", "grad_of_<name>".
  std::string name = "scan_fn";
  bool go_backwards = false;
  /// The step's last returned Variable is a stop condition (see the file comment).
  bool until = false;
  /// Where the loop's own nodes say they were created, for bindings whose callers have no
  /// std::source_location (default: scan()'s `location`). The step's nodes keep their own.
  std::optional<Provenance> provenance;
};

/// What the step function returns: one Variable per outputs_info entry (then the stop condition
/// with `until`), and the updates it makes each step (see the file comment).
struct ScanStep {
  ScanStep(std::vector<Variable> step_outputs)  // NOLINT: a step without updates
      : outputs(std::move(step_outputs)) {}
  ScanStep(std::vector<Variable> step_outputs, std::vector<Update> step_updates)
      : outputs(std::move(step_outputs)), updates(std::move(step_updates)) {}
  std::vector<Variable> outputs;
  std::vector<Update> updates;
  /// A stop condition decided by the step itself (Theano's scan_module.until), as with
  /// ScanOptions::until and the condition returned last.
  Variable until;
};

struct ScanResult {
  /// One per outputs_info entry: every step's value, stacked along a new axis 0.
  std::vector<Variable> outputs;
  /// One per shared variable the step updates (its own updates, then its random draws' states):
  /// the value after the last step.
  std::vector<Update> updates;
};

using ScanStepFn = std::function<ScanStep(const std::vector<Variable>&)>;

/// Builds a loop node (a Scan) running `step`; see the file comment.
[[nodiscard]] ScanResult scan(
    const ScanStepFn& step,
    const std::vector<ScanSequence>& sequences,
    const std::vector<ScanOutput>& outputs_info,
    const std::vector<Variable>& non_sequences = {},
    const ScanOptions& options = {},
    const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
