// SPDX-License-Identifier: Apache-2.0
#include "program.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "trace_labels.h"
#include "tscope/profile/tick_clock.h"
#include "tscope/rewrite/inplace_rules.h"

namespace tscope::runtime {

int Program::slot_of(const Variable& variable) const {
  auto it = slot_index_.find(variable.node());
  TSCOPE_CHECK(it != slot_index_.end(), "variable without a slot: " + variable.to_string());
  return it->second;
}

namespace {
// How many in-place writes precede `value` in its chain: its producer overwrote its own input,
// which was produced in place, and so on. Each of those values' slots may still hold the buffer.
long inplace_chain_depth(const Variable& value) {
  long depth = 0;
  for (const ApplyNode* producer = value.owner(); producer != nullptr;) {
    const int input = rewrite::overwritten_input(*producer);
    if (input < 0) break;
    ++depth;
    producer = producer->input(input).owner();
  }
  return depth;
}
}  // namespace

Program Program::link(const FunctionGraph& graph,
                      const std::vector<Variable>& kept_values,
                      const LinkOptions& options,
                      Clock& clock,
                      profile::CompileRecord& record) {
  const std::int64_t link_start_ns = clock.now_ns();
  Program program;
  program.allow_gc_ = options.allow_gc;
  const std::vector<ApplyNode*> order = graph.toposort();

  auto assign_slot = [&](const Variable& variable) {
    auto [it, inserted] = program.slot_index_.try_emplace(
        variable.node(), static_cast<int>(program.slot_index_.size()));
    return std::pair{it->second, inserted};
  };
  for (const Variable& input : graph.inputs()) assign_slot(input);
  std::vector<std::pair<int, Variable>> constants;
  for (const Variable& leaf : graph.leaves()) {
    auto [slot, inserted] = assign_slot(leaf);
    if (!inserted) continue;
    if (leaf.kind() == VariableKind::Constant) {
      constants.emplace_back(slot, leaf);
    } else {
      program.shared_slots_.emplace_back(slot, leaf);
    }
  }
  for (ApplyNode* node : order) {
    for (int i = 0; i < node->num_outputs(); ++i) {
      program.intermediate_slots_.push_back(assign_slot(node->output(i)).first);
    }
  }
  program.slot_count_ = program.slot_index_.size();
  for (const auto& [slot, constant] : constants) {
    program.constant_slots_.push_back(slot);
    program.constant_values_.push_back(constant.constant_value());
  }

  // Last reader of each intermediate slot (for allow_gc).
  std::unordered_set<int> kept;
  for (const Variable& value : kept_values) kept.insert(program.slot_of(value));
  std::vector<int> last_use(program.slot_count_, -1);

  // (duration, node index): names are built only for the few slowest the record keeps.
  std::vector<std::pair<std::int64_t, std::size_t>> prepare_times;
  for (std::size_t index = 0; index < order.size(); ++index) {
    ApplyNode* node = order[index];
    const std::int64_t prepare_start_ns = clock.now_ns();
    const OpDef& op = node->op();
    const KernelImpl* impl = &op.reference;
    if (!options.reference_kernels && op.fast.available() &&
        (op.fast.accepts == nullptr || op.fast.accepts(node->inputs(), node->attrs()))) {
      impl = &op.fast;
    }
    std::vector<int> inputs;
    for (const Variable& input : node->inputs()) {
      const int slot = program.slot_of(input);
      inputs.push_back(slot);
      last_use[static_cast<std::size_t>(slot)] = static_cast<int>(index);
    }
    std::vector<int> outputs;
    for (int i = 0; i < node->num_outputs(); ++i) {
      const int slot = program.slot_of(node->output(i));
      outputs.push_back(slot);
      last_use[static_cast<std::size_t>(slot)] =
          std::max(last_use[static_cast<std::size_t>(slot)], static_cast<int>(index));
    }
    const int inplace_input = rewrite::overwritten_input(*node);
    program.inplace_inputs_.push_back(inplace_input);
    program.inplace_holders_.push_back(
        inplace_input >= 0 ? 1 + inplace_chain_depth(node->input(inplace_input)) : 1);
    program.kernels_.push_back(impl->fn);
    program.nodes_.push_back(node);
    program.impl_names_.push_back(impl->name_for(node->inputs(), node->attrs()));
    program.input_slots_.push_back(std::move(inputs));
    program.output_slots_.push_back(std::move(outputs));
    prepare_times.emplace_back(clock.now_ns() - prepare_start_ns, index);
  }

  // Without allow_gc nothing is freed during a run, so an in-place output's slot still shares the
  // overwritten input's buffer afterwards; emptying it lets the input's producer reuse that buffer
  // on the next call instead of allocating.
  if (!options.allow_gc) {
    for (std::size_t index = 0; index < order.size(); ++index) {
      const int input = program.inplace_inputs_[index];
      if (input < 0) continue;
      const int output_slot = program.output_slots_[index][0];
      if (kept.count(output_slot) != 0) continue;
      program.inplace_slots_.emplace_back(program.input_slots_[index][static_cast<std::size_t>(input)],
                                          output_slot);
    }
  }

  std::vector<std::vector<int>> frees(order.size());
  for (int slot : program.intermediate_slots_) {
    const int use = last_use[static_cast<std::size_t>(slot)];
    if (kept.count(slot) != 0 || use < 0) {
      program.held_after_run_.push_back(slot);
    } else {
      frees[static_cast<std::size_t>(use)].push_back(slot);
    }
  }
  program.free_begin_.push_back(0);
  for (const auto& list : frees) {
    program.free_slots_.insert(program.free_slots_.end(), list.begin(), list.end());
    program.free_begin_.push_back(static_cast<std::int32_t>(program.free_slots_.size()));
  }

  for (const auto& [duration_ns, index] : prepare_times) record.node_prepare_ns += duration_ns;
  std::stable_sort(prepare_times.begin(), prepare_times.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < prepare_times.size() && i < 5; ++i) {
    record.slowest_prepares.push_back(
        {order[prepare_times[i].second]->to_string(), prepare_times[i].first});
  }
  record.node_count = static_cast<std::int64_t>(order.size());
  record.link_ns = clock.now_ns() - link_start_ns;
  return program;
}

std::unique_ptr<Frame> Program::make_frame(bool profiling) const {
  auto frame = std::make_unique<Frame>();
  frame->slots.resize(slot_count_);
  for (std::size_t i = 0; i < constant_slots_.size(); ++i) {
    frame->slots[static_cast<std::size_t>(constant_slots_[i])] = constant_values_[i];
  }
  if (allow_gc_) frame->pool = std::make_unique<BufferPool>();
  std::size_t input_count = 0;
  std::size_t output_count = 0;
  for (std::size_t index = 0; index < kernels_.size(); ++index) {
    input_count += input_slots_[index].size();
    output_count += output_slots_[index].size();
  }
  // Reserved in full first: the contexts point into these vectors.
  frame->input_pointers.reserve(input_count);
  frame->output_pointers.reserve(output_count);
  frame->contexts.resize(kernels_.size());
  for (std::size_t index = 0; index < kernels_.size(); ++index) {
    KernelContext& context = frame->contexts[index];
    const ApplyNode* node = nodes_[index];
    context.node = node;
    context.attrs = node != nullptr ? &node->attrs() : nullptr;
    context.num_inputs = static_cast<int>(input_slots_[index].size());
    context.num_outputs = static_cast<int>(output_slots_[index].size());
    context.allocator = &default_allocator();
    context.inplace_input = inplace_inputs_[index];
    context.inplace_holders = inplace_holders_[index];
    context.pool = frame->pool.get();
    context.inputs = frame->input_pointers.data() + frame->input_pointers.size();
    for (int slot : input_slots_[index]) {
      frame->input_pointers.push_back(&frame->slots[static_cast<std::size_t>(slot)]);
    }
    context.outputs = frame->output_pointers.data() + frame->output_pointers.size();
    for (int slot : output_slots_[index]) {
      frame->output_pointers.push_back(&frame->slots[static_cast<std::size_t>(slot)]);
    }
  }
  if (profiling) {
    frame->counters.assign(kernels_.size(), NodeCounters{});
    frame->signatures.assign(kernels_.size(), NodeSignatures{});
  }
  return frame;
}

namespace {

// FNV-1a style mixing of the input dtypes, shapes and strides: a few ns for the usual 1-3 inputs.
std::uint64_t input_signature(const KernelContext& context) noexcept {
  std::uint64_t hash = 1469598103934665603ULL;
  auto mix = [&hash](std::uint64_t value) { hash = (hash ^ value) * 1099511628211ULL; };
  for (int i = 0; i < context.num_inputs; ++i) {
    const Tensor& value = *context.inputs[i];
    mix(static_cast<std::uint64_t>(value.dtype()) << 8 | static_cast<std::uint64_t>(value.rank()));
    for (std::int64_t extent : value.shape()) mix(static_cast<std::uint64_t>(extent));
    for (std::int64_t stride : value.strides()) mix(static_cast<std::uint64_t>(stride));
  }
  return hash;
}

void no_op_kernel(KernelContext& /*context*/) {}

// Installs a profiled run as this thread's active one and restores the enclosing run's (a loop
// body runs inside its node's kernel) on every exit.
class ActiveProfileScope {
 public:
  ActiveProfileScope(const ProfileSink& sink, bool tsc) noexcept
      : saved_(std::exchange(active_profile(), ActiveProfile{&sink, tsc})) {}
  ~ActiveProfileScope() { active_profile() = saved_; }
  ActiveProfileScope(const ActiveProfileScope&) = delete;
  ActiveProfileScope& operator=(const ActiveProfileScope&) = delete;

 private:
  ActiveProfile saved_;
};

// The unprofiled loop installs nothing: no work at all on its path.
struct NoActiveProfileScope {
  NoActiveProfileScope(const ProfileSink& /*sink*/, bool /*tsc*/) noexcept {}
};

}  // namespace

ActiveProfile& active_profile() noexcept {
  thread_local ActiveProfile active;
  return active;
}

namespace {}  // namespace

profile::TensorRecord tensor_record(const Tensor& value) {
  profile::TensorRecord record;
  if (!value.defined()) return record;
  record.dtype = std::string(dtype_name(value.dtype()));
  record.shape.assign(value.shape().begin(), value.shape().end());
  const auto item = static_cast<std::int64_t>(dtype_size(value.dtype()));
  for (std::int64_t stride : value.strides()) record.strides_bytes.push_back(stride * item);
  record.contiguous = value.is_contiguous();
  return record;
}

void Program::record_signature(const Frame& frame,
                               std::size_t index,
                               std::uint64_t signature,
                               std::int64_t duration,
                               const ProfileSink& sink) const {
  NodeCounters& counter = sink.counters[index];
  NodeSignatures& known = sink.signatures[index];
  const std::int64_t ticks_before = counter.total_ticks - duration;
  const std::int64_t calls_before = counter.call_count - 1;
  if (counter.signature_index >= 0) {
    const auto previous = static_cast<std::size_t>(counter.signature_index);
    known.records[previous].call_count += counter.signature_run;
    known.ticks[previous] += ticks_before - known.run_start_ticks;
    known.timed_calls[previous] += calls_before - known.run_start_calls;
  }
  known.run_start_ticks = ticks_before;
  known.run_start_calls = calls_before;
  counter.signature_run = 0;
  counter.last_signature = signature;
  const auto it = std::find(known.hashes.begin(), known.hashes.end(), signature);
  if (it != known.hashes.end()) {
    counter.signature_index = static_cast<std::int32_t>(it - known.hashes.begin());
    return;
  }
  const KernelContext& context = frame.contexts[index];
  profile::SignatureRecord record;
  for (int i = 0; i < context.num_inputs; ++i)
    record.inputs.push_back(tensor_record(*context.inputs[i]));
  for (int i = 0; i < context.num_outputs; ++i)
    record.outputs.push_back(tensor_record(*context.outputs[i]));
  if (sink.trace != nullptr) {
    profile::note_trace_signature(sink.trace_function, static_cast<std::uint32_t>(index), signature,
                                  trace_signature_label(*nodes_[index], record));
  }
  counter.signature_index = static_cast<std::int32_t>(known.hashes.size());
  known.hashes.push_back(signature);
  known.records.push_back(std::move(record));
  known.ticks.push_back(0);
  known.timed_calls.push_back(0);
}

template <bool kProfile, bool kTsc>
void Program::run(Frame& frame, const ProfileSink& sink) const {
  const std::size_t count = kernels_.size();
  KernelContext* const contexts = frame.contexts.data();
  Tensor* const slots = frame.slots.data();
  BufferPool* const pool = frame.pool.get();
  std::size_t index = 0;
  const std::conditional_t<kProfile, ActiveProfileScope, NoActiveProfileScope> active(sink, kTsc);
  try {
    for (; index < count; ++index) {
      KernelContext& context = contexts[index];
      if constexpr (kProfile) {
        const std::int64_t start = kTsc ? profile::read_tsc() : sink.clock->now_ns();
        kernels_[index](context);
        const std::int64_t duration = (kTsc ? profile::read_tsc() : sink.clock->now_ns()) - start;
        NodeCounters& counter = sink.counters[index];
        ++counter.call_count;
        counter.total_ticks += duration;
        counter.min_ticks = std::min(counter.min_ticks, duration);
        counter.max_ticks = std::max(counter.max_ticks, duration);
        const std::uint64_t signature = input_signature(context);
        if (signature != counter.last_signature || counter.signature_index < 0) [[unlikely]] {
          record_signature(frame, index, signature, duration, sink);
        }
        ++counter.signature_run;
        if (sink.trace != nullptr) [[unlikely]] {
          sink.trace->write(start, start + duration,
                            profile::trace_meta(profile::TraceEventKind::Node, kTsc,
                                                static_cast<std::uint32_t>(index)),
                            sink.trace_function, static_cast<std::int64_t>(signature),
                            sink.allocator->live_bytes());
        }
      } else {
        kernels_[index](context);
      }
      if (allow_gc_) {
        for (std::int32_t k = free_begin_[index]; k < free_begin_[index + 1]; ++k) {
          Tensor& freed = slots[static_cast<std::size_t>(free_slots_[static_cast<std::size_t>(k)])];
          std::shared_ptr<Buffer> buffer = freed.buffer();
          freed = Tensor();
          if (pool != nullptr) pool->give(std::move(buffer));  // kept only if nobody holds it
        }
      }
    }
    if (pool != nullptr) pool->clear();
    // Latest first: a chain's later output shares the buffer only while its input still does.
    for (auto it = inplace_slots_.rbegin(); it != inplace_slots_.rend(); ++it) {
      Tensor& output = slots[static_cast<std::size_t>(it->second)];
      if (output.buffer() == slots[static_cast<std::size_t>(it->first)].buffer()) output = Tensor();
    }
  } catch (Error& error) {
    if (pool != nullptr) pool->clear();
    const std::string context = "in " + nodes_[index]->describe();
    if (error.context().empty() || error.context().front() != context) error.add_context(context);
    throw;
  } catch (const std::bad_alloc&) {
    // Scratch a kernel allocates itself (not through the allocator, which raises OutOfMemory).
    if (pool != nullptr) pool->clear();
    throw Error(ErrorKind::OutOfMemory, "out of memory in a kernel's own scratch")
        .add_context("in " + nodes_[index]->describe());
  } catch (const std::exception& error) {
    if (pool != nullptr) pool->clear();
    throw Error(ErrorKind::Internal, fmt::format("kernel threw: {}", error.what()))
        .add_context("in " + nodes_[index]->describe());
  }
}

template void Program::run<true, true>(Frame&, const ProfileSink&) const;
template void Program::run<true, false>(Frame&, const ProfileSink&) const;
template void Program::run<false, false>(Frame&, const ProfileSink&) const;

double Program::measured_overhead_ns_per_node() {
  static const double overhead_ns = [] {
    constexpr std::size_t kNodes = 512;
    Program program;
    program.allow_gc_ = false;
    program.slot_count_ = 1;
    program.constant_slots_.assign(1, 0);
    program.constant_values_.assign(1, Tensor::zeros(DType::Float32, {1}));
    program.kernels_.assign(kNodes, no_op_kernel);
    program.nodes_.assign(kNodes, nullptr);
    program.input_slots_.assign(kNodes, {0});
    program.output_slots_.assign(kNodes, {});
    program.free_begin_.assign(kNodes + 1, 0);
    program.inplace_inputs_.assign(kNodes, -1);
    program.inplace_holders_.assign(kNodes, 1);
    const std::unique_ptr<Frame> frame = program.make_frame(true);
    const profile::TickSource& ticks = profile::measured_tick_source();
    const ProfileSink sink{frame->counters.data(), frame->signatures.data(), &steady_clock()};
    auto best_ns = [&](auto&& body) {
      std::int64_t best = std::numeric_limits<std::int64_t>::max();
      for (int repeat = 0; repeat < 50; ++repeat) {
        const std::int64_t start_ns = steady_clock().now_ns();
        body();
        best = std::min(best, steady_clock().now_ns() - start_ns);
      }
      return static_cast<double>(best);
    };
    const double off_ns = best_ns([&] { program.run<false>(*frame, {}); });
    const double on_ns = ticks.use_tsc ? best_ns([&] { program.run<true, true>(*frame, sink); })
                                       : best_ns([&] { program.run<true, false>(*frame, sink); });
    return std::max(0.0, (on_ns - off_ns) / static_cast<double>(kNodes));
  }();
  return overhead_ns;
}

}  // namespace tscope::runtime
