// SPDX-License-Identifier: Apache-2.0
#include "profile_merge.h"

#include <algorithm>
#include <limits>

#include "scan/scan_body.h"
#include "signature_cost.h"
#include "tscope/rewrite/fusion_role.h"
#include "tscope/rewrite/inplace_rules.h"

namespace tscope::runtime {

/// One node's counters summed over every frame, with its signatures merged by hash.
struct ProfileMerge::MergedNode {
  std::int64_t call_count = 0;
  std::int64_t total_ticks = 0;
  std::int64_t min_ticks = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ticks = 0;
  std::vector<std::uint64_t> hashes;
  std::vector<profile::SignatureRecord> signatures;  ///< call and timed-call counts summed
  std::vector<std::int64_t> signature_ticks;
  /// The signature of the last call of the frame that ran this node most.
  std::int64_t current = -1;
  std::int64_t current_frame_calls = -1;
};

/// One loop node's totals summed over every frame, and its body's merge.
struct ProfileMerge::MergedLoop {
  std::size_t index = 0;
  const ScanBody* body = nullptr;
  LoopTotals totals;
  std::unique_ptr<ProfileMerge> body_merge;
};

namespace {

// Adds one frame's counters of one node, closing its open signature run as the frame would.
template <typename Merged>
void merge_node(const NodeCounters& counter, const NodeSignatures& known, Merged& merged) {
  merged.call_count += counter.call_count;
  merged.total_ticks += counter.total_ticks;
  merged.min_ticks = std::min(merged.min_ticks, counter.min_ticks);
  merged.max_ticks = std::max(merged.max_ticks, counter.max_ticks);
  for (std::size_t k = 0; k < known.records.size(); ++k) {
    profile::SignatureRecord record = known.records[k];
    record.timed_call_count = known.timed_calls[k];
    std::int64_t ticks = known.ticks[k];
    if (static_cast<std::int64_t>(k) == counter.signature_index) {
      // The current signature's run is still open: its share is what the counters added since.
      record.call_count += counter.signature_run;
      ticks += counter.total_ticks - known.run_start_ticks;
      record.timed_call_count += counter.call_count - known.run_start_calls;
    }
    const auto found = std::find(merged.hashes.begin(), merged.hashes.end(), known.hashes[k]);
    std::size_t at = static_cast<std::size_t>(found - merged.hashes.begin());
    if (found == merged.hashes.end()) {
      merged.hashes.push_back(known.hashes[k]);
      merged.signatures.push_back(std::move(record));
      merged.signature_ticks.push_back(ticks);
    } else {
      merged.signatures[at].call_count += record.call_count;
      merged.signatures[at].timed_call_count += record.timed_call_count;
      merged.signature_ticks[at] += ticks;
    }
    if (static_cast<std::int64_t>(k) == counter.signature_index &&
        counter.call_count > merged.current_frame_calls) {
      merged.current = static_cast<std::int64_t>(at);
      merged.current_frame_calls = counter.call_count;
    }
  }
}

void add_totals(const LoopTotals& from, LoopTotals& to) {
  to.call_count += from.call_count;
  to.step_count += from.step_count;
  to.call_ticks += from.call_ticks;
  to.vm_ticks += from.vm_ticks;
  to.bind_ticks += from.bind_ticks;
  to.store_ticks += from.store_ticks;
  to.first_step_ticks += from.first_step_ticks;
  to.step_min_ticks = std::min(to.step_min_ticks, from.step_min_ticks);
  to.step_max_ticks = std::max(to.step_max_ticks, from.step_max_ticks);
  to.steps.add(from.steps);
}

}  // namespace

double StepHistogram::median_ticks() const noexcept {
  std::int64_t total = 0;
  for (std::int64_t count : counts_) total += count;
  if (total == 0) return 0;
  std::int64_t seen = 0;
  for (int index = 0; index < kBucketCount; ++index) {
    seen += counts_[static_cast<std::size_t>(index)];
    if (2 * seen < total + 1) continue;
    if (index < kBucketsPerOctave) return index;
    const int octave = index / kBucketsPerOctave + 3;
    const int fraction = index % kBucketsPerOctave;
    const double width = static_cast<double>(std::int64_t{1} << (octave - 4));
    return (kBucketsPerOctave + fraction) * width + width / 2;
  }
  return 0;
}

void forget_frame_timings(Frame& frame) {
  for (NodeCounters& counter : frame.counters) {
    counter.call_count = 0;
    counter.total_ticks = 0;
    counter.min_ticks = std::numeric_limits<std::int64_t>::max();
    counter.max_ticks = 0;
  }
  for (NodeSignatures& known : frame.signatures) {
    std::fill(known.ticks.begin(), known.ticks.end(), 0);
    std::fill(known.timed_calls.begin(), known.timed_calls.end(), 0);
    known.run_start_ticks = 0;
    known.run_start_calls = 0;
  }
  frame.totals.call_count = 0;
  frame.totals.call_ns = 0;
  frame.totals.vm_ns = 0;
  for (KernelContext& context : frame.contexts) {
    auto* loop = dynamic_cast<LoopState*>(context.state.get());
    if (loop == nullptr) continue;
    loop->totals = LoopTotals{};
    forget_frame_timings(*loop->frame);
  }
}

ProfileMerge::ProfileMerge(const Program& program)
    : program_(program), merged_(program.instruction_count()) {}

ProfileMerge::~ProfileMerge() = default;

void ProfileMerge::add(const Frame& frame) {
  if (frame.counters.empty()) return;  // not profiling
  for (std::size_t index = 0; index < merged_.size(); ++index) {
    merge_node(frame.counters[index], frame.signatures[index], merged_[index]);
    const auto* state = dynamic_cast<const LoopState*>(frame.contexts[index].state.get());
    if (state == nullptr) continue;
    auto found = std::find_if(loops_.begin(), loops_.end(),
                              [index](const MergedLoop& loop) { return loop.index == index; });
    if (found == loops_.end()) {
      MergedLoop loop;
      loop.index = index;
      loop.body = dynamic_cast<const ScanBody*>(&loop_body(program_.node(index)->attrs()));
      loop.body_merge = std::make_unique<ProfileMerge>(*state->program);
      loops_.push_back(std::move(loop));
      found = loops_.end() - 1;
    }
    add_totals(state->totals, found->totals);
    found->body_merge->add(*state->frame);
  }
}

std::vector<profile::NodeRecord> ProfileMerge::node_records(
    double ns_per_tick, std::span<const BlasCopyStats> copies_before) const {
  auto to_ns = [ns_per_tick](std::int64_t ticks) {
    return static_cast<std::int64_t>(static_cast<double>(ticks) * ns_per_tick + 0.5);
  };
  std::vector<profile::NodeRecord> records;
  for (std::size_t index = 0; index < program_.instruction_count(); ++index) {
    const ApplyNode* node = program_.node(index);
    const OpDef& op = node->op();
    const MergedNode& counter = merged_[index];
    profile::NodeRecord out;
    out.topo_index = static_cast<std::int64_t>(index);
    out.apply_name = node->to_string();
    out.op_name = node->op_string();
    out.class_name = std::string(op.family);
    out.impl = std::string(program_.impl_name(index));
    out.op_kind = std::string(op.name);
    out.elementwise = op.traits.elementwise;
    out.fast_impl_available = op.fast.available();
    out.fusion_role = std::string(rewrite::fusion_role(*node));
    out.call_count = counter.call_count;
    out.total_ns = to_ns(counter.total_ticks);
    out.min_ns = counter.call_count > 0 ? to_ns(counter.min_ticks) : 0;
    out.max_ns = to_ns(counter.max_ticks);
    const BlasCopyStats copies = blas_copy_stats_for_node(node->id());
    const BlasCopyStats before =
        index < copies_before.size() ? copies_before[index] : BlasCopyStats{};
    out.copied_input_count = copies.copies - before.copies;
    out.copied_input_bytes = copies.bytes - before.bytes;
    out.source_site = node->provenance().site.short_string();
    out.user_op = node->provenance().user_op;
    for (int slot : program_.input_slots(index)) out.input_ids.push_back(slot);
    for (int slot : program_.output_slots(index)) out.output_ids.push_back(slot);
    out.signatures = counter.signatures;
    if (counter.current >= 0) {
      const auto last = static_cast<std::size_t>(counter.current);
      out.inputs = out.signatures[last].inputs;
      out.outputs = out.signatures[last].outputs;
    }
    for (std::size_t k = 0; k < out.signatures.size(); ++k) {
      out.signatures[k].total_ns = to_ns(counter.signature_ticks[k]);
    }
    // The use_inplace rewrite's mark, where the last call met the VM's conditions for it.
    const int inplace = rewrite::overwritten_input(*node);
    const bool wrote_in_place =
        inplace >= 0 && static_cast<std::size_t>(inplace) < out.inputs.size() &&
        !out.outputs.empty() && out.inputs[static_cast<std::size_t>(inplace)].contiguous &&
        out.inputs[static_cast<std::size_t>(inplace)].dtype == out.outputs[0].dtype &&
        out.inputs[static_cast<std::size_t>(inplace)].shape == out.outputs[0].shape;
    for (int i = 0; i < node->num_outputs(); ++i) {
      std::int64_t aliased_input = -1;
      std::string code = "c";
      for (const auto& [output, input] : op.aliasing.destroys) {
        if (output == i) aliased_input = input, code = "i";
      }
      if (i == 0 && wrote_in_place) aliased_input = inplace, code = "i";
      for (const auto& [output, input] : op.aliasing.views) {
        if (output == i) aliased_input = input, code = "v";  // v wins, as in the reference
      }
      out.output_alias.push_back(code);
      out.output_alias_input.push_back(aliased_input);
    }
    out.output_bytes = output_bytes(out.outputs);
    if (counter.call_count > 0) {
      if (const std::optional<Cost> cost = signature_cost(*node, out.inputs, out.outputs)) {
        out.flops_per_call = cost->flops;
        out.bytes_per_call = cost->bytes;
      }
    }
    records.push_back(std::move(out));
  }
  return records;
}

std::vector<profile::LoopRecord> ProfileMerge::loop_records(double ns_per_tick) const {
  auto to_ns = [ns_per_tick](double ticks) {
    return static_cast<std::int64_t>(ticks * ns_per_tick + 0.5);
  };
  std::vector<const MergedLoop*> ordered;
  for (const MergedLoop& loop : loops_) ordered.push_back(&loop);
  std::sort(ordered.begin(), ordered.end(),
            [](const MergedLoop* a, const MergedLoop* b) { return a->index < b->index; });
  std::vector<profile::LoopRecord> records;
  for (const MergedLoop* loop : ordered) {
    const LoopTotals& totals = loop->totals;
    profile::LoopRecord record;
    record.topo_index = static_cast<std::int64_t>(loop->index);
    record.name = loop->body != nullptr ? loop->body->layout().name : std::string("loop");
    record.apply_name = program_.node(loop->index)->to_string();
    record.call_count = totals.call_count;
    record.step_count = totals.step_count;
    record.call_ns = to_ns(static_cast<double>(totals.call_ticks));
    record.vm_ns = to_ns(static_cast<double>(totals.vm_ticks));
    record.bind_ns = to_ns(static_cast<double>(totals.bind_ticks));
    record.store_ns = to_ns(static_cast<double>(totals.store_ticks));
    record.setup_ns =
        std::max<std::int64_t>(0, record.call_ns - record.vm_ns - record.bind_ns - record.store_ns);
    record.first_step_ns = to_ns(static_cast<double>(totals.first_step_ticks));
    const bool later_steps = totals.step_max_ticks > 0 || totals.steps.median_ticks() > 0;
    record.step_min_ns = later_steps ? to_ns(static_cast<double>(totals.step_min_ticks)) : 0;
    record.step_max_ns = to_ns(static_cast<double>(totals.step_max_ticks));
    // A bucket's middle may lie outside the steps' range when they all fall into one bucket.
    record.step_median_ns =
        std::clamp(to_ns(totals.steps.median_ticks()), record.step_min_ns, record.step_max_ns);
    profile::FunctionRecord& body = record.body;
    body.name = record.name;
    body.call_count = totals.step_count;
    body.call_ns = record.bind_ns + record.vm_ns + record.store_ns;
    body.vm_ns = record.vm_ns;
    body.allow_gc = false;
    const Program& program = loop->body_merge->program_;
    if (loop->body != nullptr) {
      const ScanBody::Linked& linked = loop->body->linked();
      body.compile = linked.compile;
      record.invariant_nodes = loop->body->invariant_instructions();
      for (int slot : linked.input_slots) body.input_ids.push_back(slot);
      for (int slot : linked.output_slots) body.output_ids.push_back(slot);
    }
    for (const auto& [slot, shared] : program.shared_slots()) body.input_ids.push_back(slot);
    for (int slot : program.constant_slots()) body.input_ids.push_back(slot);
    body.nodes = loop->body_merge->node_records(ns_per_tick, {});
    body.loops = loop->body_merge->loop_records(ns_per_tick);
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace tscope::runtime
