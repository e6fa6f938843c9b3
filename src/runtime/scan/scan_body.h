// SPDX-License-Identifier: Apache-2.0
#pragma once
// ScanBody: what a Scan node runs. It holds the step's graph, closed over placeholder inputs,
// and the layout that maps the node's outer inputs and outputs onto it:
//   outer inputs:  n_steps (int64 scalar), sequences, initial states, non-sequences
//   outer outputs: one per step output, in the step's order
//   body inputs:   every sequence tap, every state tap, the non-sequences
//   body outputs:  one per step output, then the stop condition of a while loop
// An initial state's axis 0 holds the `window` values before step 0 (a single-tap-(-1) state
// gets that axis from scan(), so the body always reads rows). The body is rewritten and linked
// into its own Program once, on first run, and shared by every frame and function that runs it.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../program.h"
#include "tscope/core/clock.h"
#include "tscope/ops/loop.h"
#include "tscope/profile/profile.h"

namespace tscope::runtime {

struct ScanLayout {
  std::string name;
  bool go_backwards = false;
  /// Per sequence: its taps, increasing.
  std::vector<std::vector<std::int64_t>> sequence_taps;
  /// Per step output: its taps (negative, increasing; empty: not fed back), and whether only the
  /// final value comes out (otherwise every step's, stacked).
  struct Output {
    std::vector<std::int64_t> taps;
    bool last_only = false;
    [[nodiscard]] bool is_state() const noexcept { return !taps.empty(); }
    [[nodiscard]] std::int64_t window() const noexcept { return taps.empty() ? 0 : -taps.front(); }
  };
  std::vector<Output> outputs;
  int non_sequence_count = 0;
  /// The body has one more output after the step outputs: a scalar stop condition.
  bool until = false;

  [[nodiscard]] int sequence_count() const noexcept {
    return static_cast<int>(sequence_taps.size());
  }
  [[nodiscard]] int state_count() const noexcept;
  /// Outer input index of sequence j, of the initial value of step output o (a state), of
  /// non-sequence p.
  [[nodiscard]] int sequence_input(int j) const noexcept { return 1 + j; }
  [[nodiscard]] int initial_input(int o) const noexcept;
  [[nodiscard]] int non_sequence_input(int p) const noexcept {
    return 1 + sequence_count() + state_count() + p;
  }
  [[nodiscard]] int outer_input_count() const noexcept {
    return 1 + sequence_count() + state_count() + non_sequence_count;
  }
  /// Body input index of sequence j's tap number `k` (index into its taps), of state output o's
  /// tap number k, of non-sequence p.
  [[nodiscard]] int sequence_tap_input(int j, int k) const noexcept;
  [[nodiscard]] int state_tap_input(int o, int k) const noexcept;
  [[nodiscard]] int body_non_sequence_input(int p) const noexcept;
  [[nodiscard]] int body_input_count() const noexcept;
};

class ScanBody final : public LoopBody {
 public:
  /// `inputs` are the body's placeholders in layout order; `outputs` its results.
  ScanBody(ScanLayout layout, std::vector<Variable> inputs, std::vector<Variable> outputs);

  [[nodiscard]] std::string label() const override;
  [[nodiscard]] std::vector<Type> output_types(const InferContext& context) const override;
  void run(KernelContext& context) const override;
  [[nodiscard]] std::vector<Variable> pullback(const PullbackContext& context) const override;
  [[nodiscard]] std::string printed_name() const override { return "Scan{" + layout_.name + "}"; }
  [[nodiscard]] std::optional<Hoisted> hoist_invariants(
      const std::vector<Variable>& outer_inputs) const override;
  [[nodiscard]] std::optional<Hoisted> push_out_sequence_work(
      const std::vector<Variable>& outer_inputs) const override;
  [[nodiscard]] std::optional<Hoisted> merged_with(
      const LoopBody& other,
      const std::vector<Variable>& outer_inputs,
      const std::vector<Variable>& other_outer_inputs) const override;
  [[nodiscard]] std::optional<Reshaped> push_out_accumulated_products(
      const std::vector<Variable>& outer_inputs) const override;
  [[nodiscard]] bool can_keep_last_only(int output) const override;
  [[nodiscard]] std::shared_ptr<const LoopBody> with_last_only(int output) const override;

  [[nodiscard]] const ScanLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] const std::vector<Variable>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const std::vector<Variable>& outputs() const noexcept { return outputs_; }

  /// The linked body (rewritten and linked on first use; thread-safe).
  struct Linked {
    FunctionGraph graph;
    Program program;
    profile::CompileRecord compile;
    std::vector<int> input_slots;
    std::vector<int> output_slots;
    /// Output slots written by a body node (not inputs or constants), which the kernel may
    /// empty after each step.
    std::vector<int> released_output_slots;
    /// The graph's non-sequence inputs, whose tensors stay the same through one execution
    /// (LoopInvariantScope).
    std::vector<Variable> invariant_inputs;
  };
  [[nodiscard]] const Linked& linked() const;
  /// Instructions of the linked body that read only non-sequences and constants (and results
  /// of such instructions): the same at every step.
  [[nodiscard]] std::vector<std::int64_t> invariant_instructions() const;
  /// The id the timeline's step slices and body nodes carry: the body registered as a function
  /// named "<name> step" on first use (trace_recorder.h).
  [[nodiscard]] std::uint32_t trace_function() const;

 private:
  ScanLayout layout_;
  std::vector<Variable> inputs_;
  std::vector<Variable> outputs_;
  std::int64_t id_;
  mutable std::once_flag link_once_;
  mutable std::unique_ptr<Linked> linked_;
  mutable std::atomic<std::int64_t> trace_function_{-1};
  mutable std::mutex trace_mutex_;
};

/// `outputs` with each replacement that some output depends on (clone_replace rejects the others:
/// a step may ignore one of its inputs).
[[nodiscard]] std::vector<Variable> clone_with(
    const std::vector<Variable>& outputs,
    const std::vector<std::pair<Variable, Variable>>& replacements);

/// Of the body nodes in `order` for which `moves` is true (nodes a rewrite takes out of the loop),
/// the output values the rest reads: inputs of the other nodes in `order`, and `outputs`; each
/// once, in order of first use.
[[nodiscard]] std::vector<Variable> values_read_outside(
    const std::vector<ApplyNode*>& order,
    const std::function<bool(const ApplyNode*)>& moves,
    const std::vector<Variable>& outputs);

/// Applies a Scan node running `body` to `outer_inputs` (layout order) and returns its outputs.
[[nodiscard]] std::vector<Variable> apply_scan(std::shared_ptr<const ScanBody> body,
                                               std::vector<Variable> outer_inputs,
                                               const std::source_location& location);

}  // namespace tscope::runtime
