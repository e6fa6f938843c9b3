// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Compiled functions: function() clones the graph, rewrites it, orders and links it into a
/// Program, and returns a callable Function that runs on the VM.
///
///   Variable x = matrix(DType::Float32, "x");
///   Variable w = shared(Tensor::zeros(DType::Float32, {784, 10}), "w");
///   Variable cost = mean(sqr(dot(x, w)));
///   auto [gw] = grad(cost, {w});
///   Function train = function({x}, {cost}, {{w, w - 0.1 * gw}});
///   Tensor loss = train({batch})[0];
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "tscope/core/clock.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/function_graph.h"
#include "tscope/graph/variable.h"
#include "tscope/profile/profile.h"
#include "tscope/profile/profile_collector.h"
#include "tscope/profile/profile_options.h"

#pragma GCC visibility push(default)

namespace tscope {

/// After each call, `shared` takes the value `new_value` had during the call.
struct Update {
  Variable shared;
  Variable new_value;
};

/// The defaults of allow_gc, profile, profile_memory and ignore_first_call come from TSCOPE_FLAGS
/// (profile::process_flags(), which throws Error(BadFlag) on a bad flag).
struct FunctionOptions {
  /// The report's "Message"; default: the file:line where function() was called.
  std::string name;
  /// Free intermediate buffers after their last use (lower peak), instead of keeping them for the
  /// next call (fewer allocations).
  bool allow_gc = profile::process_flags().allow_gc;
  /// Time every node. Off: the VM's loop has no clock reads at all. With the global flag
  /// `profile=true` the function also joins the process-wide list printed at exit.
  bool profile = profile::process_flags().profile;
  /// Print the memory section and per-node input/output lines (shapes are recorded per
  /// signature whenever profiling).
  bool profile_memory = profile::process_flags().profile_memory;
  /// Drop the first call's timings (warm-up) of each execution frame, i.e. the first call of each
  /// thread that calls concurrently; compile figures and signatures are kept.
  bool ignore_first_call = profile::process_flags().ignore_first_call;
  /// Where the profile accumulates; shared between functions to sum them. Created when profiling
  /// and none is given.
  std::shared_ptr<profile::ProfileCollector> collector;
  /// Time source for profiling; nullptr: the steady clock. Tests inject a FakeClock.
  Clock* clock = nullptr;
  /// Run the reference kernel of every op (tests and debugging).
  bool reference_kernels = false;
  /// Rewrites to skip, by name ("use_channel_blocks", ...; the compile section of a profile lists
  /// them). An unknown name is an InvalidArgument error.
  std::vector<std::string> excluded_rewrites;
  /// The channel block of the blocked convolution layout (rewrite use_channel_blocks): 8 or 16,
  /// or 0 for the CPU's (preferred_channel_block(): 16 where oneDNN runs AVX-512 code).
  std::int64_t channel_block = 0;
  /// Whether use_channel_blocks may run 3x3 stride-1 convolutions with Winograd F(2x2, 3x3) where
  /// oneDNN has it (winograd_available(): AVX-512). Faster on every 3x3 stride-1 ResNet layer;
  /// the results differ from the direct convolution's by up to about 1e-5 of the magnitude of the
  /// products summed (docs/conv.md, "Winograd"). false: direct convolutions only.
  bool winograd = true;
};

namespace detail {
class FunctionImpl;
}  // namespace detail

/// A compiled function. Copies share one compiled program.
///
/// Threads: a Function may be called from several threads at once. Each call runs in its own
/// execution frame (slots, kernel state, buffer pool, profile counters) taken from a pool that
/// grows to the number of calls in flight, so the steady state allocates no frame. Every call
/// reads its shared variables' values together, at its start; a function with updates runs one
/// call at a time and applies each call's updates together, at its end, so calls to it behave as
/// if made one after the other in the order they took their turn. Functions without updates run
/// fully in parallel. Profiles count every call of every thread; a snapshot waits for the calls
/// in flight. Kernel state (packed weights) is per frame: N concurrent callers hold N copies.
class Function {
 public:
  /// Runs the function. Throws TypeMismatch/ShapeMismatch naming the input when a tensor does not
  /// match its input's type, and any kernel error with the failing node as context. Thread-safe
  /// (see the class comment).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;

  [[nodiscard]] const std::string& name() const;
  /// The graph after rewriting, in execution order.
  [[nodiscard]] const FunctionGraph& graph() const;
  /// The profile collector this function writes to (nullptr when not profiling).
  [[nodiscard]] std::shared_ptr<profile::ProfileCollector> collector() const;
  /// This function's current profile record.
  [[nodiscard]] profile::FunctionRecord profile_record() const;
  /// Forgets the timings and call counts recorded so far (after warm-up calls); compile figures
  /// and shape signatures stay.
  void reset_profile_timings() const;

 private:
  friend Function function(const std::vector<Variable>&,
                           const std::vector<Variable>&,
                           const std::vector<Update>&,
                           FunctionOptions,
                           const std::source_location&);
  explicit Function(std::shared_ptr<detail::FunctionImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::FunctionImpl> impl_;
};

/// Compiles a function. Throws InvalidArgument for an update of a non-shared variable or a
/// missing input, TypeMismatch when an update's value type differs from its shared variable.
[[nodiscard]] Function function(
    const std::vector<Variable>& inputs,
    const std::vector<Variable>& outputs,
    const std::vector<Update>& updates = {},
    FunctionOptions options = {},
    const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
