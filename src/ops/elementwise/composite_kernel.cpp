// SPDX-License-Identifier: Apache-2.0
// The fast kernel of Composite: one pass over memory. The expression's index space (the broadcast
// shape, reduced axes moved innermost) is collapsed where every operand allows and walked in
// tiles of at most kTileElements elements. For each tile, an input that is contiguous over it is
// read in place, one that is constant over it is splatted, and any other layout (broadcast rows,
// transposes) is gathered through a table of offsets built once per shape (run by run where the
// offsets form long consecutive runs: a per-channel value over a channel-blocked image); then
// every step of the program runs its op's block kernel over the tile into a small per-thread
// buffer, and the step of each output writes that output directly or is folded into it
// (reduction). No intermediate tensor exists.
//
// Tiles hold whole innermost axes and a range of one more axis (the split axis), so a tile of
// the last range along that axis is a prefix of a full tile and shares its offset tables.
// Reductions: when the split axis is kept, a tile holds whole runs of reduced values, one output
// element each; when it is reduced, several tiles make up one output element's run and are folded
// in order. Work is divided over output elements, so threads never write the same element.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "../reduce/reduce_common.h"
#include "composite_program.h"
#include "elementwise_def.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops::detail {
namespace {

/// A tile's values of every input and step stay in the first cache levels between steps.
constexpr std::int64_t kTileElements = 512;

enum class Access { InPlace, Splat, Gather };

/// A stretch of a gathered tile whose offsets are consecutive: `length` elements from tile
/// position `start` come from `length` consecutive elements at `offset`.
struct GatherRun {
  std::int64_t start = 0;
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

/// Runs at least this long on average are copied run by run rather than element by element: a
/// per-channel value broadcast over the pixels of a channel-blocked image repeats one run of a
/// block's channels per pixel.
constexpr std::int64_t kMinGatherRun = 8;

struct OperandWalk {
  std::array<std::int64_t, kMaxRank> strides{};  ///< per iteration axis, in elements
  Access access = Access::InPlace;
  std::vector<std::int64_t> offsets;  ///< Gather: the offset of each element of a full tile
  std::vector<GatherRun> runs;        ///< Gather: the offsets as runs, when they are long
};

// The consecutive stretches of `offsets`, or none when they average under kMinGatherRun.
std::vector<GatherRun> gather_runs(const std::vector<std::int64_t>& offsets) {
  std::vector<GatherRun> runs;
  const auto tile = static_cast<std::int64_t>(offsets.size());
  for (std::int64_t t = 0; t < tile; ++t) {
    const std::int64_t offset = offsets[static_cast<std::size_t>(t)];
    if (!runs.empty() && runs.back().offset + runs.back().length == offset) {
      ++runs.back().length;
    } else {
      runs.push_back({t, offset, 1});
    }
  }
  if (static_cast<std::int64_t>(runs.size()) * kMinGatherRun > tile) runs.clear();
  return runs;
}

/// How one shape of inputs is walked; rebuilt when shapes or strides change.
struct Plan {
  int rank = 1;  ///< iteration axes, kept ones first
  std::array<std::int64_t, kMaxRank> extents{};
  int kept = 1;                  ///< leading axes that the output keeps; the others are reduced
  int split = 0;                 ///< tiles hold axes (split, rank) whole and `step` of axis split
  std::int64_t step = 1;
  std::int64_t tile_inner = 1;   ///< elements of axes (split, rank)
  std::int64_t split_steps = 1;  ///< tiles along the split axis
  std::int64_t units = 0;        ///< tiles in the whole walk
  std::int64_t run = 1;          ///< values folded into one output element
  std::int64_t units_per_group = 1;  ///< tiles per output element when a tile is part of a run
  std::vector<OperandWalk> inputs;
  std::array<std::int64_t, kMaxRank> out_strides{};
  [[nodiscard]] std::int64_t groups() const { return units / units_per_group; }
  [[nodiscard]] bool tile_in_run() const { return units_per_group > 1 || split >= kept; }
};

struct CompositeState final : KernelState {
  CompositeProgram program;
  /// Per value id: the output it is, or -1.
  std::vector<int> output_of_value;
  CompositeReduction reduction = CompositeReduction::None;
  // What the plan was built for.
  Dims shape;
  std::vector<Dims> input_shapes;
  std::vector<Dims> input_strides;
  std::vector<int> axes;
  bool planned = false;
  Plan plan;
  // The data pointers of one call's inputs and outputs: kept here so that a call allocates
  // nothing (the state belongs to one instruction of one frame, used by one call at a time).
  std::vector<const void*> input_data;
  std::vector<void*> out_data;
};

Plan make_plan(const Dims& shape, std::span<const Tensor* const> inputs,
               const std::vector<int>& reduced) {
  const int rank = shape.rank();
  const auto num_inputs = inputs.size();
  auto is_reduced = [&](int axis) { return std::ranges::find(reduced, axis) != reduced.end(); };
  // Strides of every operand over the expression's axes: 0 where an input broadcasts.
  std::vector<std::vector<std::int64_t>> in_strides(num_inputs,
                                                    std::vector<std::int64_t>(rank, 0));
  for (std::size_t k = 0; k < num_inputs; ++k) {
    const Tensor& input = *inputs[k];
    for (int axis = 0; axis < rank; ++axis) {
      const int in_axis = axis - (rank - input.rank());
      if (in_axis >= 0 && input.shape()[in_axis] != 1) {
        in_strides[k][static_cast<std::size_t>(axis)] = input.strides()[in_axis];
      }
    }
  }
  std::vector<std::int64_t> out_stride(static_cast<std::size_t>(rank), 0);
  std::int64_t running = 1;
  for (int axis = rank - 1; axis >= 0; --axis) {
    if (is_reduced(axis)) continue;
    out_stride[static_cast<std::size_t>(axis)] = running;
    running *= shape[axis];
  }
  // Kept axes first, then reduced ones; size-1 axes dropped.
  std::vector<int> order;
  for (int axis = 0; axis < rank; ++axis) {
    if (!is_reduced(axis) && shape[axis] != 1) order.push_back(axis);
  }
  const auto kept_count = static_cast<int>(order.size());
  for (int axis : reduced) {
    if (shape[axis] != 1) order.push_back(axis);
  }
  Plan plan;
  plan.inputs.resize(num_inputs);
  plan.rank = 0;
  plan.kept = 0;
  for (std::size_t position = 0; position < order.size(); ++position) {
    const auto axis = static_cast<std::size_t>(order[position]);
    const std::int64_t extent = shape[order[position]];
    const bool kept = static_cast<int>(position) < kept_count;
    // Merge into the previous iteration axis when every operand steps through both as one.
    if (plan.rank > 0 && (kept == (plan.rank <= plan.kept))) {
      const auto last = static_cast<std::size_t>(plan.rank - 1);
      bool mergeable = plan.out_strides[last] == out_stride[axis] * extent;
      for (std::size_t k = 0; k < num_inputs && mergeable; ++k) {
        mergeable = plan.inputs[k].strides[last] == in_strides[k][axis] * extent;
      }
      if (mergeable) {
        plan.extents[last] *= extent;
        plan.out_strides[last] = out_stride[axis];
        for (std::size_t k = 0; k < num_inputs; ++k) plan.inputs[k].strides[last] = in_strides[k][axis];
        continue;
      }
    }
    const auto next = static_cast<std::size_t>(plan.rank++);
    plan.extents[next] = extent;
    plan.out_strides[next] = out_stride[axis];
    for (std::size_t k = 0; k < num_inputs; ++k) plan.inputs[k].strides[next] = in_strides[k][axis];
    if (kept) plan.kept = plan.rank;
  }
  if (plan.rank == 0) {  // a single element
    plan.rank = 1;
    plan.kept = 1;
    plan.extents[0] = 1;
  }
  // The tile: whole innermost axes while they fit, then a balanced range of the next one.
  int split = plan.rank - 1;
  std::int64_t inner = 1;
  while (split > 0 && inner * plan.extents[static_cast<std::size_t>(split)] <= kTileElements) {
    inner *= plan.extents[static_cast<std::size_t>(split)];
    --split;
  }
  const std::int64_t split_extent = plan.extents[static_cast<std::size_t>(split)];
  const std::int64_t capacity = std::max<std::int64_t>(1, kTileElements / inner);
  const std::int64_t pieces = (split_extent + capacity - 1) / capacity;
  plan.split = split;
  plan.tile_inner = inner;
  plan.step = (split_extent + pieces - 1) / pieces;
  plan.split_steps = (split_extent + plan.step - 1) / plan.step;
  plan.units = plan.split_steps;
  for (int axis = 0; axis < split; ++axis) plan.units *= plan.extents[static_cast<std::size_t>(axis)];
  for (int axis = plan.kept; axis < plan.rank; ++axis) {
    plan.run *= plan.extents[static_cast<std::size_t>(axis)];
  }
  if (split >= plan.kept && plan.kept < plan.rank) {
    // A tile lies inside one run: the tiles of axes [kept, split] make up an output element.
    plan.units_per_group = plan.split_steps;
    for (int axis = plan.kept; axis < split; ++axis) {
      plan.units_per_group *= plan.extents[static_cast<std::size_t>(axis)];
    }
  }
  // Offsets of every element of a full tile, and how each input is best read.
  const std::int64_t tile = plan.step * plan.tile_inner;
  for (OperandWalk& walk : plan.inputs) {
    walk.offsets.resize(static_cast<std::size_t>(tile));
    bool in_place = true;
    bool constant = true;
    for (std::int64_t t = 0; t < tile; ++t) {
      std::int64_t rest = t % plan.tile_inner;
      std::int64_t offset = (t / plan.tile_inner) * walk.strides[static_cast<std::size_t>(split)];
      for (int axis = plan.rank - 1; axis > split; --axis) {
        const std::int64_t extent = plan.extents[static_cast<std::size_t>(axis)];
        offset += (rest % extent) * walk.strides[static_cast<std::size_t>(axis)];
        rest /= extent;
      }
      walk.offsets[static_cast<std::size_t>(t)] = offset;
      in_place = in_place && offset == t;
      constant = constant && offset == 0;
    }
    walk.access = constant ? Access::Splat : in_place ? Access::InPlace : Access::Gather;
    if (walk.access != Access::Gather) walk.offsets.clear();
    if (walk.access == Access::Gather) walk.runs = gather_runs(walk.offsets);
  }
  return plan;
}

/// One tile's position: where it starts in each operand and how many elements it holds.
struct TilePosition {
  std::int64_t out_base = 0;
  std::int64_t count = 0;
};

template <class C>
struct Job {
  const Plan* plan;
  const CompositeProgram* program;
  const std::vector<int>* output_of_value;
  CompositeReduction reduction;
  const void* const* input_data;  ///< per input, of type C
  void* const* out_data;          ///< per output, of type C
  [[nodiscard]] const C* input(std::size_t k) const { return static_cast<const C*>(input_data[k]); }
  [[nodiscard]] C* output(std::size_t o) const { return static_cast<C*>(out_data[o]); }
};

/// Per-thread buffers: one tile for each input that is not read in place and for each step.
template <class C>
struct Scratch {
  std::vector<C> buffers;
  std::vector<std::int64_t> bases;
  // Per splat or gather buffer: the base it was filled from and how many elements it holds.
  std::vector<std::int64_t> filled_base;
  std::vector<std::int64_t> filled_count;
  std::vector<const C*> values;
  std::vector<C*> destinations;  // per output: where its tile is written, or null
  std::vector<double> folds;     // per output: the running fold of a run spread over tiles
};

template <class C>
Scratch<C>& thread_scratch(std::size_t num_inputs, std::size_t value_count,
                           std::size_t output_count) {
  thread_local Scratch<C> scratch;
  scratch.buffers.resize(std::max(scratch.buffers.size(),
                                  value_count * static_cast<std::size_t>(kTileElements)));
  scratch.bases.resize(num_inputs);
  scratch.filled_base.assign(num_inputs, std::numeric_limits<std::int64_t>::min());
  scratch.filled_count.assign(num_inputs, 0);
  scratch.values.resize(value_count);
  scratch.destinations.assign(output_count, nullptr);
  scratch.folds.resize(output_count);
  return scratch;
}

template <class C>
C* buffer_of(Scratch<C>& scratch, std::size_t value) {
  return scratch.buffers.data() + value * static_cast<std::size_t>(kTileElements);
}

// Sets the inputs' bases for tile `unit` and returns its output offset and element count.
TilePosition locate(const Plan& plan, std::int64_t unit, std::span<std::int64_t> bases) {
  const std::int64_t split_index = unit % plan.split_steps;
  std::int64_t rest = unit / plan.split_steps;
  const auto split = static_cast<std::size_t>(plan.split);
  const std::int64_t first = split_index * plan.step;
  TilePosition position;
  position.count = std::min(plan.step, plan.extents[split] - first) * plan.tile_inner;
  position.out_base = first * plan.out_strides[split];
  for (std::size_t k = 0; k < bases.size(); ++k) bases[k] = first * plan.inputs[k].strides[split];
  for (int axis = plan.split - 1; axis >= 0; --axis) {
    const auto a = static_cast<std::size_t>(axis);
    const std::int64_t coordinate = rest % plan.extents[a];
    rest /= plan.extents[a];
    position.out_base += coordinate * plan.out_strides[a];
    for (std::size_t k = 0; k < bases.size(); ++k) bases[k] += coordinate * plan.inputs[k].strides[a];
  }
  return position;
}

// Evaluates the tile whose input bases are in `scratch`, leaving each value's tile in
// scratch.values; an output with a destination in scratch.destinations is written there.
template <class C>
void evaluate_tile(const Job<C>& job, Scratch<C>& scratch, std::int64_t count) {
  const Plan& plan = *job.plan;
  const CompositeProgram& program = *job.program;
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    const OperandWalk& walk = plan.inputs[k];
    const C* data = job.input(k) + scratch.bases[k];
    switch (walk.access) {
      case Access::InPlace:
        scratch.values[k] = data;
        break;
      case Access::Splat:
      case Access::Gather: {
        // Tiles of one offset table differ only in their base, so a buffer filled from this base
        // still holds this tile's values: a splat fills a whole tile once per value, and an input
        // broadcast along the split axis (the atoms of a distance grid, read again for every block
        // of grid points) is gathered once per base.
        C* buffer = buffer_of(scratch, k);
        if (scratch.filled_base[k] != scratch.bases[k] || scratch.filled_count[k] < count) {
          if (walk.access == Access::Splat) {
            const std::int64_t tile = plan.step * plan.tile_inner;
            std::fill(buffer, buffer + tile, *data);
            scratch.filled_count[k] = tile;
          } else if (!walk.runs.empty()) {
            // A tile shorter than a full one is a prefix of it: its runs end at `count`.
            for (const GatherRun& run : walk.runs) {
              if (run.start >= count) break;
              std::copy_n(data + run.offset, std::min(run.length, count - run.start),
                          buffer + run.start);
            }
            scratch.filled_count[k] = count;
          } else {
            const std::int64_t* offsets = walk.offsets.data();
            for (std::int64_t t = 0; t < count; ++t) buffer[t] = data[offsets[t]];
            scratch.filled_count[k] = count;
          }
          scratch.filled_base[k] = scratch.bases[k];
        }
        scratch.values[k] = buffer;
        break;
      }
    }
  }
  const auto num_inputs = static_cast<std::size_t>(program.num_inputs);
  for (std::size_t s = 0; s < program.steps.size(); ++s) {
    const CompositeStep& step = program.steps[s];
    std::array<const C*, 3> args{};
    for (int k = 0; k < step.arity; ++k) {
      args[static_cast<std::size_t>(k)] =
          scratch.values[static_cast<std::size_t>(step.operands[static_cast<std::size_t>(k)])];
    }
    const int output = (*job.output_of_value)[num_inputs + s];
    C* out = output >= 0 && scratch.destinations[static_cast<std::size_t>(output)] != nullptr
                 ? scratch.destinations[static_cast<std::size_t>(output)]
                 : buffer_of(scratch, num_inputs + s);
    block_kernel_for<C>(step.op->block)(args.data(), out, count);
    scratch.values[num_inputs + s] = out;
  }
}

// Add folds in double (as Sum does: one rounding at the end of a float32 run); maximum in C.
template <class C>
struct Fold {
  CompositeReduction reduction;
  [[nodiscard]] double init() const {
    return reduction == CompositeReduction::Add ? 0.0 : -std::numeric_limits<double>::infinity();
  }
  [[nodiscard]] double over(double acc, const C* values, std::int64_t count) const {
    if (reduction == CompositeReduction::Add) {
      // Short runs (a sum over a coordinate axis) add directly; long ones in sum_row's lanes.
      if (count >= 16) return acc + sum_row(values, count);
      for (std::int64_t i = 0; i < count; ++i) acc += static_cast<double>(values[i]);
      return acc;
    }
    C best = static_cast<C>(acc);
    for (std::int64_t i = 0; i < count; ++i) best = maximum_fold(best, values[i]);
    return static_cast<double>(best);
  }

  /// Folds consecutive runs of `run` values into out[0, count / run), each in order, so the results
  /// are those of over(). Short runs (a sum over 3 coordinates, or over 12 atoms) would each be a
  /// chain of dependent additions waiting on one another's latency; instead several runs are
  /// folded at once in registers, one position of each at a time, so that their chains overlap.
  void runs(const C* values, std::int64_t count, std::int64_t run, C* out) const {
    const std::int64_t runs = count / run;
    if (run >= 16) {
      for (std::int64_t r = 0; r < runs; ++r) {
        out[r] = static_cast<C>(over(init(), values + r * run, run));
      }
      return;
    }
    std::int64_t r = 0;
    for (; r + kRunsAtOnce <= runs; r += kRunsAtOnce) {
      runs_at_once<kRunsAtOnce>(values + r * run, run, out + r);
    }
    for (; r < runs; ++r) runs_at_once<1>(values + r * run, run, out + r);
  }

  static constexpr std::int64_t kRunsAtOnce = 8;

  template <std::int64_t kRuns>
  void runs_at_once(const C* values, std::int64_t run, C* out) const {
    if (reduction == CompositeReduction::Add) {
      std::array<double, kRuns> totals{};
      for (std::int64_t j = 0; j < run; ++j) {
        for (std::int64_t k = 0; k < kRuns; ++k) totals[k] += static_cast<double>(values[k * run + j]);
      }
      for (std::int64_t k = 0; k < kRuns; ++k) out[k] = static_cast<C>(totals[k]);
      return;
    }
    std::array<C, kRuns> best;
    best.fill(-std::numeric_limits<C>::infinity());
    for (std::int64_t j = 0; j < run; ++j) {
      for (std::int64_t k = 0; k < kRuns; ++k) best[k] = maximum_fold(best[k], values[k * run + j]);
    }
    for (std::int64_t k = 0; k < kRuns; ++k) out[k] = best[k];
  }
};

template <class C>
void run_groups(const Job<C>& job, std::int64_t begin, std::int64_t end) {
  const Plan& plan = *job.plan;
  const CompositeProgram& program = *job.program;
  const std::size_t output_count = program.outputs.size();
  Scratch<C>& scratch = thread_scratch<C>(plan.inputs.size(),
                                          static_cast<std::size_t>(program.value_count()),
                                          output_count);
  const Fold<C> fold{job.reduction};
  const bool reduces = job.reduction != CompositeReduction::None;
  auto values_of = [&](std::size_t o) {
    return scratch.values[static_cast<std::size_t>(program.outputs[o])];
  };
  for (std::int64_t group = begin; group < end; ++group) {
    std::fill(scratch.folds.begin(), scratch.folds.end(), fold.init());
    for (std::int64_t unit = group * plan.units_per_group;
         unit < (group + 1) * plan.units_per_group; ++unit) {
      const TilePosition position = locate(plan, unit, scratch.bases);
      if (!reduces) {
        for (std::size_t o = 0; o < output_count; ++o) {
          scratch.destinations[o] = job.output(o) + position.out_base;
        }
        evaluate_tile(job, scratch, position.count);
        continue;
      }
      evaluate_tile(job, scratch, position.count);
      for (std::size_t o = 0; o < output_count; ++o) {
        if (plan.tile_in_run()) {
          scratch.folds[o] = fold.over(scratch.folds[o], values_of(o), position.count);
        } else {
          // Whole runs, one output element each, consecutive in the output.
          fold.runs(values_of(o), position.count, plan.run, job.output(o) + position.out_base);
        }
      }
    }
    if (reduces && plan.tile_in_run()) {
      for (std::size_t o = 0; o < output_count; ++o) {
        job.output(o)[group] = static_cast<C>(scratch.folds[o]);
      }
    }
  }
}

template <class C>
void run_plan(const Job<C>& job, std::int64_t element_count) {
  const std::int64_t groups = job.plan->groups();
  const int parts =
      static_cast<int>(std::min<std::int64_t>(threads::parts_for(element_count), groups));
  threads::for_each_part(
      groups, parts, [&](std::int64_t first, std::int64_t last) { run_groups(job, first, last); });
}

CompositeState& state_of(KernelContext& ctx) {
  if (ctx.state == nullptr) {
    auto state = std::make_shared<CompositeState>();
    state->program = parse_composite(*ctx.attrs, ctx.num_inputs);
    state->output_of_value.assign(static_cast<std::size_t>(state->program.value_count()), -1);
    for (std::size_t o = 0; o < state->program.outputs.size(); ++o) {
      state->output_of_value[static_cast<std::size_t>(state->program.outputs[o])] =
          static_cast<int>(o);
    }
    state->reduction = composite_reduction(*ctx.attrs);
    ctx.state = std::move(state);
  }
  return static_cast<CompositeState&>(*ctx.state);
}

// Rebuilds the plan when the shapes or strides differ from the last call's.
const Plan& plan_for(CompositeState& state, const KernelContext& ctx, const Dims& shape,
                     const std::vector<int>& axes) {
  bool same = state.planned && state.shape == shape && state.axes == axes;
  for (int k = 0; k < ctx.num_inputs && same; ++k) {
    const auto index = static_cast<std::size_t>(k);
    same = state.input_shapes[index] == ctx.input(k).shape() &&
           state.input_strides[index] == ctx.input(k).strides();
  }
  if (same) return state.plan;
  std::vector<const Tensor*> inputs;
  state.input_shapes.clear();
  state.input_strides.clear();
  for (int k = 0; k < ctx.num_inputs; ++k) {
    inputs.push_back(&ctx.input(k));
    state.input_shapes.push_back(ctx.input(k).shape());
    state.input_strides.push_back(ctx.input(k).strides());
  }
  state.plan = make_plan(shape, inputs, axes);
  state.shape = shape;
  state.axes = axes;
  state.planned = true;
  return state.plan;
}
}  // namespace

void compute_composite(KernelContext& ctx) {
  CompositeState& state = state_of(ctx);
  const Dims shape = elementwise_output_shape(ctx);
  std::vector<int> axes;
  Dims out_shape = shape;
  if (state.reduction != CompositeReduction::None) {
    axes = reduced_axes(*ctx.attrs, shape.rank());
    if (state.reduction == CompositeReduction::Maximum) {
      require_nonempty_reduction(shape, axes, "Composite maximum");
    }
    out_shape = reduced_dims(shape, axes, ctx.attrs->get_bool_or("keepdims", false));
  }
  const DType dtype = ctx.input(0).dtype();
  const std::size_t output_count = state.program.outputs.size();
  for (std::size_t o = 0; o < output_count; ++o) {
    (void)ctx.allocate_output(static_cast<int>(o), dtype, out_shape);
  }
  auto run = [&](auto tag) {
    using C = decltype(tag);
    state.out_data.resize(output_count);
    for (std::size_t o = 0; o < output_count; ++o) {
      state.out_data[o] = ctx.output(static_cast<int>(o)).raw_data();
    }
    if (shape.product() == 0) {
      // An empty sum is 0 (an empty maximum was rejected above).
      for (std::size_t o = 0; o < output_count; ++o) {
        C* data = static_cast<C*>(state.out_data[o]);
        std::fill(data, data + out_shape.product(), C{0});
      }
      return;
    }
    state.input_data.resize(static_cast<std::size_t>(ctx.num_inputs));
    for (int k = 0; k < ctx.num_inputs; ++k) {
      state.input_data[static_cast<std::size_t>(k)] = ctx.input(k).raw_data();
    }
    const Job<C> job{.plan = &plan_for(state, ctx, shape, axes),
                     .program = &state.program,
                     .output_of_value = &state.output_of_value,
                     .reduction = state.reduction,
                     .input_data = state.input_data.data(),
                     .out_data = state.out_data.data()};
    run_plan(job, shape.product());
  };
  if (dtype == DType::Float32) {
    run(float{});
  } else {
    run(double{});
  }
}

}  // namespace tscope::ops::detail
