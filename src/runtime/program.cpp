// SPDX-License-Identifier: Apache-2.0
#include "program.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

namespace tscope::runtime {

int Program::slot_of(const Variable& variable) const {
  auto it = slot_index_.find(variable.node());
  TSCOPE_CHECK(it != slot_index_.end(), "variable without a slot: " + variable.to_string());
  return it->second;
}

Program Program::link(const FunctionGraph& graph, const std::vector<Variable>& kept_values,
                      const LinkOptions& options, Clock& clock, profile::CompileRecord& record) {
  const std::int64_t link_start_ns = clock.now_ns();
  Program program;
  program.allow_gc_ = options.allow_gc;
  const std::vector<ApplyNode*> order = graph.toposort();

  auto assign_slot = [&](const Variable& variable) {
    auto [it, inserted] = program.slot_index_.try_emplace(variable.node(),
                                                          static_cast<int>(program.slot_index_.size()));
    return std::pair{it->second, inserted};
  };
  for (const Variable& input : graph.inputs()) assign_slot(input);
  for (const Variable& leaf : graph.leaves()) {
    auto [slot, inserted] = assign_slot(leaf);
    if (inserted) program.leaf_slots_.emplace_back(slot, leaf);
  }
  std::size_t pointer_count = 0;
  for (ApplyNode* node : order) {
    for (int i = 0; i < node->num_outputs(); ++i) {
      program.intermediate_slots_.push_back(assign_slot(node->output(i)).first);
    }
    pointer_count += static_cast<std::size_t>(node->num_inputs() + node->num_outputs());
  }
  program.slots_.resize(program.slot_index_.size());
  program.input_pointers_.reserve(pointer_count);
  program.output_pointers_.reserve(pointer_count);

  // Last reader of each intermediate slot (for allow_gc).
  std::unordered_set<int> kept;
  for (const Variable& value : kept_values) kept.insert(program.slot_of(value));
  std::vector<int> last_use(program.slots_.size(), -1);

  std::vector<std::pair<std::int64_t, std::string>> prepare_times;
  for (std::size_t index = 0; index < order.size(); ++index) {
    ApplyNode* node = order[index];
    const std::int64_t prepare_start_ns = clock.now_ns();
    const OpDef& op = node->op();
    const KernelImpl* impl = &op.reference;
    if (!options.reference_kernels && op.fast.available() &&
        (op.fast.accepts == nullptr || op.fast.accepts(node->inputs(), node->attrs()))) {
      impl = &op.fast;
    }
    Instruction instruction;
    instruction.kernel = impl->fn;
    KernelContext& context = instruction.context;
    context.node = node;
    context.attrs = &node->attrs();
    context.num_inputs = node->num_inputs();
    context.num_outputs = node->num_outputs();
    context.allocator = &default_allocator();
    context.inputs = program.input_pointers_.data() + program.input_pointers_.size();
    std::vector<int> inputs;
    for (const Variable& input : node->inputs()) {
      const int slot = program.slot_of(input);
      inputs.push_back(slot);
      program.input_pointers_.push_back(&program.slots_[static_cast<std::size_t>(slot)]);
      last_use[static_cast<std::size_t>(slot)] = static_cast<int>(index);
    }
    context.outputs = program.output_pointers_.data() + program.output_pointers_.size();
    std::vector<int> outputs;
    for (int i = 0; i < node->num_outputs(); ++i) {
      const int slot = program.slot_of(node->output(i));
      outputs.push_back(slot);
      program.output_pointers_.push_back(&program.slots_[static_cast<std::size_t>(slot)]);
      last_use[static_cast<std::size_t>(slot)] =
          std::max(last_use[static_cast<std::size_t>(slot)], static_cast<int>(index));
    }
    program.instructions_.push_back(instruction);
    program.nodes_.push_back(node);
    program.impl_names_.push_back(impl->name);
    program.input_slots_.push_back(std::move(inputs));
    program.output_slots_.push_back(std::move(outputs));
    prepare_times.emplace_back(clock.now_ns() - prepare_start_ns, node->to_string());
  }

  std::vector<std::vector<int>> frees(order.size());
  for (int slot : program.intermediate_slots_) {
    if (kept.count(slot) != 0) continue;
    const int use = last_use[static_cast<std::size_t>(slot)];
    if (use >= 0) frees[static_cast<std::size_t>(use)].push_back(slot);
  }
  program.free_begin_.push_back(0);
  for (const auto& list : frees) {
    program.free_slots_.insert(program.free_slots_.end(), list.begin(), list.end());
    program.free_begin_.push_back(static_cast<std::int32_t>(program.free_slots_.size()));
  }

  for (const auto& [duration_ns, name] : prepare_times) record.node_prepare_ns += duration_ns;
  std::stable_sort(prepare_times.begin(), prepare_times.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < prepare_times.size() && i < 5; ++i) {
    record.slowest_prepares.push_back({prepare_times[i].second, prepare_times[i].first});
  }
  record.node_count = static_cast<std::int64_t>(order.size());
  record.link_ns = clock.now_ns() - link_start_ns;
  return program;
}

template <bool kProfile>
void Program::run(NodeCounters* counters, SlotSnapshot* snapshots, Clock* clock) {
  const std::size_t count = instructions_.size();
  std::size_t index = 0;
  try {
    for (; index < count; ++index) {
      Instruction& instruction = instructions_[index];
      if constexpr (kProfile) {
        const std::int64_t start_ns = clock->now_ns();
        instruction.kernel(instruction.context);
        const std::int64_t duration_ns = clock->now_ns() - start_ns;
        NodeCounters& counter = counters[index];
        ++counter.call_count;
        counter.total_ns += duration_ns;
        counter.min_ns = std::min(counter.min_ns, duration_ns);
        counter.max_ns = std::max(counter.max_ns, duration_ns);
        for (int slot : output_slots_[index]) {
          const Tensor& value = slots_[static_cast<std::size_t>(slot)];
          SlotSnapshot& snapshot = snapshots[slot];
          snapshot.defined = value.defined();
          snapshot.dtype = value.dtype();
          snapshot.shape = value.shape();
          snapshot.strides = value.strides();
        }
      } else {
        instruction.kernel(instruction.context);
      }
      if (allow_gc_) {
        for (std::int32_t k = free_begin_[index]; k < free_begin_[index + 1]; ++k) {
          slots_[static_cast<std::size_t>(free_slots_[static_cast<std::size_t>(k)])] = Tensor();
        }
      }
    }
  } catch (Error& error) {
    const std::string context = "in " + nodes_[index]->describe();
    if (error.context().empty() || error.context().front() != context) error.add_context(context);
    throw;
  } catch (const std::exception& error) {
    throw Error(ErrorKind::Internal, fmt::format("kernel threw: {}", error.what()))
        .add_context("in " + nodes_[index]->describe());
  }
}

template void Program::run<true>(NodeCounters*, SlotSnapshot*, Clock*);
template void Program::run<false>(NodeCounters*, SlotSnapshot*, Clock*);

}  // namespace tscope::runtime
