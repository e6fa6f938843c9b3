// SPDX-License-Identifier: Apache-2.0
// The Scan node's kernel: binds each step's rows into the body's frame, runs the body's Program
// and copies its outputs into the stacked outputs. In the steady state a step allocates nothing:
// rows are views, the body keeps its buffers between steps (linked without allow_gc), and the
// stacks are sized once per execution (a while loop's double when its steps outgrow them).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "../loop_state.h"
#include "../trace_labels.h"
#include "scan_body.h"
#include "tscope/graph/loop_invariants.h"
#include "tscope/profile/tick_clock.h"

namespace tscope::runtime {
namespace {

Dims drop_axis0(const Dims& dims) {
  return Dims(std::span<const std::int64_t>(dims.begin() + 1, dims.end()));
}

// Row `index` of `stack` (axis 0 dropped), a view.
Tensor row_of(const Tensor& stack, std::int64_t index) {
  return stack.view(drop_axis0(stack.shape()), drop_axis0(stack.strides()),
                    stack.offset() + index * stack.strides()[0]);
}

// Rows [first, first + count) of `stack`, a view.
Tensor row_range(const Tensor& stack, std::int64_t first, std::int64_t count) {
  Dims shape = stack.shape();
  shape[0] = count;
  return stack.view(shape, stack.strides(), stack.offset() + first * stack.strides()[0]);
}

// Copies `source` into the contiguous `target` of the same shape and dtype.
void copy_into(const Tensor& source, const Tensor& target) {
  const std::size_t item = dtype_size(source.dtype());
  const std::int64_t count = source.numel();
  char* out = static_cast<char*>(target.raw_data());
  if (source.is_contiguous()) {
    std::memcpy(out, source.raw_data(), static_cast<std::size_t>(count) * item);
    return;
  }
  const char* base = static_cast<const char*>(source.raw_data());
  const int rank = source.rank();
  Dims index = Dims::filled(rank, 0);  // inline storage: no allocation per step
  for (std::int64_t flat = 0; flat < count; ++flat) {
    std::int64_t element = 0;
    for (int axis = 0; axis < rank; ++axis) element += index[axis] * source.strides()[axis];
    std::memcpy(out + flat * static_cast<std::int64_t>(item),
                base + element * static_cast<std::int64_t>(item), item);
    for (int axis = rank - 1; axis >= 0; --axis) {
      if (++index[axis] < source.shape()[axis]) break;
      index[axis] = 0;
    }
  }
}

Dims with_rows(std::int64_t rows, const Dims& row) {
  Dims dims = Dims::filled(row.rank() + 1, rows);
  for (int axis = 0; axis < row.rank(); ++axis) dims[axis + 1] = row[axis];
  return dims;
}

// A contiguous (rows, row...) tensor: `kept` when nobody else holds it and it fits exactly.
Tensor stack_buffer(
    Tensor& kept, DType dtype, std::int64_t rows, const Dims& row, Allocator& allocator) {
  const Dims shape = with_rows(rows, row);
  if (kept.defined() && kept.dtype() == dtype && kept.shape() == shape &&
      held_only_here(kept.buffer())) {
    return kept;
  }
  kept = Tensor::empty(dtype, shape, allocator);
  return kept;
}

// Rows a while loop's stacks start with. Its n_steps is only a bound, often far above the steps
// it runs (exporters write INT64_MAX for "no limit"), so its stacks double as steps need rows.
constexpr std::int64_t kWhileLoopInitialRows = 16;

// `stack` with at least `rows` rows along axis 0: the same tensor, or a copy into a new one with
// twice the rows (at most `max_rows`).
void ensure_rows(Tensor& stack, std::int64_t rows, std::int64_t max_rows, Allocator& allocator) {
  const std::int64_t held = stack.shape()[0];
  if (rows <= held) return;
  const std::int64_t grown = std::max(rows, held <= max_rows / 2 ? 2 * held : max_rows);
  Tensor larger =
      Tensor::empty(stack.dtype(), with_rows(grown, drop_axis0(stack.shape())), allocator);
  if (held > 0) copy_into(stack, row_range(larger, 0, held));
  stack = std::move(larger);
}

// Reads the step's tick source.
struct Ticks {
  const ActiveProfile* active;
  [[nodiscard]] std::int64_t now() const {
    return active->tsc ? profile::read_tsc() : active->sink->clock->now_ns();
  }
};

template <bool kProfile>
void run_loop(KernelContext& ctx,
              LoopState& state,
              const ScanBody& scan,
              const ScanBody::Linked& body,
              const ActiveProfile& active) {
  const ScanLayout& layout = scan.layout();
  const Ticks ticks{&active};
  const std::int64_t call_start = kProfile ? ticks.now() : 0;
  const std::string& name = layout.name;
  const std::int64_t n = ctx.input(0).data<std::int64_t>()[0];
  if (n < 0) {
    throw_error(ErrorKind::InvalidArgument, "scan '{}': n_steps is {}; it must be >= 0", name, n);
  }
  Frame& frame = *state.frame;
  Tensor* const slots = frame.slots.data();
  auto slot = [&](int body_input) -> Tensor& {
    return slots[static_cast<std::size_t>(body.input_slots[static_cast<std::size_t>(body_input)])];
  };

  // Sequences: checked against the step count and taps.
  for (int j = 0; j < layout.sequence_count(); ++j) {
    const Tensor& sequence = ctx.input(layout.sequence_input(j));
    const auto& taps = layout.sequence_taps[static_cast<std::size_t>(j)];
    const std::int64_t needed = n + taps.back() - taps.front();
    if (sequence.shape()[0] < needed) {
      throw_error(ErrorKind::ShapeMismatch,
                  "scan '{}': sequence {} has {} entries along axis 0; {} steps with taps [{}] "
                  "read {}",
                  name, j, sequence.shape()[0], n, fmt::join(taps, ", "), needed);
    }
  }
  const std::int64_t first_rows = layout.until ? std::min(n, kWhileLoopInitialRows) : n;
  // Fed-back outputs: a stack holding the window before step 0, then every step (or, for an
  // output whose final value alone comes out, a ring of window + 1 rows).
  const int output_count = static_cast<int>(layout.outputs.size());
  if (state.state_stacks.size() != static_cast<std::size_t>(output_count)) {
    state.state_stacks.resize(static_cast<std::size_t>(output_count));
  }
  std::vector<Tensor>& stacks = state.state_stacks;
  for (int o = 0; o < output_count; ++o) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
    if (!output.is_state()) continue;
    const Tensor& initial = ctx.input(layout.initial_input(o));
    const std::int64_t window = output.window();
    if (initial.shape()[0] != window) {
      throw_error(ErrorKind::ShapeMismatch,
                  "scan '{}': the initial value of output {} has {} rows along axis 0; its taps "
                  "[{}] read {}",
                  name, o, initial.shape()[0], fmt::join(output.taps, ", "), window);
    }
    const Dims row = drop_axis0(initial.shape());
    const std::int64_t rows = output.last_only ? window + 1 : window + first_rows;
    Tensor stack = stack_buffer(stacks[static_cast<std::size_t>(o)], initial.dtype(), rows, row,
                                *ctx.allocator);
    for (std::int64_t r = 0; r < window; ++r) copy_into(row_of(initial, r), row_of(stack, r));
  }
  for (int p = 0; p < layout.non_sequence_count; ++p) {
    slot(layout.body_non_sequence_input(p)) = ctx.input(layout.non_sequence_input(p));
  }
  std::vector<Tensor> plain_stacks(static_cast<std::size_t>(output_count));

  LoopTotals& totals = state.totals;
  // While tracing, each step is a slice named after the loop, holding its body's nodes.
  profile::TraceRing* const trace = kProfile ? active.sink->trace : nullptr;
  const std::uint32_t trace_function = trace != nullptr ? scan.trace_function() : 0;
  const ProfileSink body_sink =
      kProfile
          ? ProfileSink{frame.counters.data(), frame.signatures.data(), active.sink->clock, trace,
                        trace_function,        active.sink->allocator}
          : ProfileSink{};
  std::int64_t step = 0;
  std::int64_t steps_run = n;  // fewer when a while loop's condition stops it
  auto release_bound = [&] {
    for (int i = 0; i < layout.body_input_count(); ++i) slot(i) = Tensor();
  };
  // The non-sequences bound above stay bound until the last step: kernels may keep what they
  // derive from them (packed weights) for this whole execution.
  const LoopInvariantScope invariants(body.invariant_inputs);
  try {
    for (; step < n; ++step) {
      const std::int64_t step_start = kProfile ? ticks.now() : 0;
      for (int j = 0; j < layout.sequence_count(); ++j) {
        const Tensor& sequence = ctx.input(layout.sequence_input(j));
        const auto& taps = layout.sequence_taps[static_cast<std::size_t>(j)];
        for (std::size_t k = 0; k < taps.size(); ++k) {
          std::int64_t index = step + taps[k] - taps.front();
          if (layout.go_backwards) index = sequence.shape()[0] - 1 - index;
          slot(layout.sequence_tap_input(j, static_cast<int>(k))) = row_of(sequence, index);
        }
      }
      for (int o = 0; o < output_count; ++o) {
        const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
        const std::int64_t window = output.window();
        for (std::size_t k = 0; k < output.taps.size(); ++k) {
          std::int64_t index = step + window + output.taps[k];
          if (output.last_only) index %= window + 1;
          slot(layout.state_tap_input(o, static_cast<int>(k))) =
              row_of(stacks[static_cast<std::size_t>(o)], index);
        }
      }
      const std::int64_t vm_start = kProfile ? ticks.now() : 0;
      if constexpr (kProfile) {
        if (active.tsc) {
          body.program.run<true, true>(frame, body_sink);
        } else {
          body.program.run<true, false>(frame, body_sink);
        }
      } else {
        body.program.run<false>(frame, body_sink);
      }
      const std::int64_t store_start = kProfile ? ticks.now() : 0;
      for (int o = 0; o < output_count; ++o) {
        const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
        const Tensor& value =
            slots[static_cast<std::size_t>(body.output_slots[static_cast<std::size_t>(o)])];
        Tensor& stack = output.is_state() ? stacks[static_cast<std::size_t>(o)]
                                          : plain_stacks[static_cast<std::size_t>(o)];
        if (!stack.defined()) {  // an output not fed back: its row shape is step 0's
          stack =
              Tensor::empty(value.dtype(), with_rows(first_rows, value.shape()), *ctx.allocator);
        }
        const Dims row = drop_axis0(stack.shape());
        if (value.shape() != row) {
          throw_error(ErrorKind::ShapeMismatch,
                      "scan '{}': output {} of the step has shape {} at step {}, but {} {}", name,
                      o, value.shape().to_string(), step, row.to_string(),
                      output.is_state() ? "its initial value has" : "step 0 gave");
        }
        std::int64_t index = step;
        if (output.is_state()) {
          index = step + output.window();
          if (output.last_only) index %= output.window() + 1;
        }
        if (layout.until && !output.last_only) {
          const std::int64_t window = output.is_state() ? output.window() : 0;
          const std::int64_t max_rows = n <= std::numeric_limits<std::int64_t>::max() - window
                                            ? window + n
                                            : std::numeric_limits<std::int64_t>::max();
          ensure_rows(stack, index + 1, max_rows, *ctx.allocator);
        }
        copy_into(value, row_of(stack, index));
      }
      const bool stop =
          layout.until && slots[static_cast<std::size_t>(body.output_slots.back())].at(0) != 0;
      // An output written in place shares its buffer with the slot it overwrote; dropping the
      // output's hold lets that producer reuse the buffer next step instead of allocating.
      for (const int output_slot : body.released_output_slots) {
        Tensor& value = slots[static_cast<std::size_t>(output_slot)];
        if (!held_only_here(value.buffer())) value = Tensor();
      }
      if constexpr (kProfile) {
        const std::int64_t step_end = ticks.now();
        totals.bind_ticks += vm_start - step_start;
        totals.vm_ticks += store_start - vm_start;
        totals.store_ticks += step_end - store_start;
        const std::int64_t duration = step_end - step_start;
        if (trace != nullptr) [[unlikely]] {
          trace->write(step_start, step_end,
                       profile::trace_meta(profile::TraceEventKind::Call, active.tsc, 0),
                       trace_function, 0, active.sink->allocator->live_bytes());
        }
        if (step == 0) {
          totals.first_step_ticks += duration;
        } else {
          totals.steps.add(duration);
          totals.step_min_ticks = std::min(totals.step_min_ticks, duration);
          totals.step_max_ticks = std::max(totals.step_max_ticks, duration);
        }
      }
      if (stop) {
        steps_run = step + 1;
        break;
      }
    }
  } catch (Error& error) {
    release_bound();
    error.add_context(fmt::format("in step {} of scan '{}'", step, name));
    throw;
  }
  release_bound();

  for (int o = 0; o < output_count; ++o) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
    Tensor& result = ctx.output(o);
    if (!output.is_state()) {
      Tensor& stack = plain_stacks[static_cast<std::size_t>(o)];
      if (!stack.defined()) {  // no step ran: the static row shape, unknown extents empty
        const Type& row = body.graph.outputs()[static_cast<std::size_t>(o)].type();
        Dims dims = row.dims;
        for (int axis = 0; axis < dims.rank(); ++axis)
          dims[axis] = std::max<std::int64_t>(dims[axis], 0);
        stack = Tensor::empty(row.dtype, with_rows(0, dims), *ctx.allocator);
      }
      result = steps_run == n ? stack : row_range(stack, 0, steps_run);
      continue;
    }
    const Tensor& stack = stacks[static_cast<std::size_t>(o)];
    const std::int64_t window = output.window();
    if (output.last_only) {
      result = row_of(stack, (steps_run - 1 + window) % (window + 1));
    } else {
      result = row_range(stack, window, steps_run);
    }
  }
  if constexpr (kProfile) {
    ++totals.call_count;
    totals.step_count += steps_run;
    totals.call_ticks += ticks.now() - call_start;
  }
}

}  // namespace

void ScanBody::run(KernelContext& context) const {
  const Linked& body = linked();
  if (context.state == nullptr) {
    auto state = std::make_shared<LoopState>();
    state->program = &body.program;
    state->frame = body.program.make_frame(/*profiling=*/true);
    context.state = std::move(state);
  }
  auto& state = static_cast<LoopState&>(*context.state);
  const ActiveProfile active = active_profile();
  if (active.sink != nullptr) {
    run_loop<true>(context, state, *this, body, active);
  } else {
    run_loop<false>(context, state, *this, body, active);
  }
}

std::uint32_t ScanBody::trace_function() const {
  const std::int64_t known = trace_function_.load(std::memory_order_acquire);
  if (known >= 0) return static_cast<std::uint32_t>(known);
  std::lock_guard lock(trace_mutex_);
  if (trace_function_.load(std::memory_order_relaxed) < 0) {
    trace_function_.store(profile::register_trace_function(layout_.name + " step",
                                                           trace_node_labels(linked().program)),
                          std::memory_order_release);
  }
  return static_cast<std::uint32_t>(trace_function_.load(std::memory_order_relaxed));
}

}  // namespace tscope::runtime
