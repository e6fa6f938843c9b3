// SPDX-License-Identifier: Apache-2.0
#include "tscope/rewrite/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>

#include "tscope/core/error.h"
#include "tscope/rewrite/blas_rules.h"
#include "tscope/rewrite/channel_block_rules.h"
#include "tscope/rewrite/clamp_rules.h"
#include "tscope/rewrite/constant_folding.h"
#include "tscope/rewrite/fusion_rules.h"
#include "tscope/rewrite/inplace_rules.h"
#include "tscope/rewrite/kernel_tap_rules.h"
#include "tscope/rewrite/layer_norm_rules.h"
#include "tscope/rewrite/loop_rules.h"
#include "tscope/rewrite/pointwise_pool_rules.h"
#include "tscope/rewrite/pow_rules.h"

namespace tscope::rewrite {
namespace {
struct NodeKey {
  const OpDef* op;
  std::size_t attrs_hash;
  std::vector<const VariableNode*> inputs;
  bool operator==(const NodeKey& other) const = default;
};
struct NodeKeyHash {
  std::size_t operator()(const NodeKey& key) const noexcept {
    std::size_t seed = std::hash<const void*>{}(key.op) ^ key.attrs_hash;
    for (const VariableNode* input : key.inputs) {
      seed ^= std::hash<const void*>{}(input) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    }
    return seed;
  }
};
}  // namespace

std::int64_t merge_duplicate_nodes(FunctionGraph& graph) {
  std::int64_t merged = 0;
  // replace() keeps every node it removes alive until release_replaced(), so the walk's raw
  // pointers stay valid.
  std::unordered_map<NodeKey, ApplyNode*, NodeKeyHash> seen;
  for (ApplyNode* node : graph.toposort()) {
    NodeKey key{&node->op(), node->attrs().hash(), {}};
    for (const Variable& input : node->inputs()) key.inputs.push_back(input.node());
    auto [it, inserted] = seen.try_emplace(key, node);
    if (inserted || !(it->second->attrs() == node->attrs())) continue;
    const ApplyNode* original = it->second;
    const std::vector<Variable> duplicates = node->outputs();
    for (int i = 0; i < node->num_outputs(); ++i) graph.replace(duplicates[i], original->output(i));
    ++merged;
  }
  return merged;
}

void verify_graph(const FunctionGraph& graph) {
  for (ApplyNode* node : graph.toposort()) {
    const std::vector<Type> types =
        node->op().infer(InferContext{node->op(), node->inputs(), node->attrs()});
    for (int i = 0; i < node->num_outputs(); ++i) {
      const Type& recorded = node->output_node(i).type;
      TSCOPE_CHECK(types[static_cast<std::size_t>(i)].dtype == recorded.dtype &&
                       types[static_cast<std::size_t>(i)].rank() == recorded.rank(),
                   fmt::format("verifier: {} output {} recorded {} but its type rule gives {}",
                               node->describe(), i, recorded.to_string(),
                               types[static_cast<std::size_t>(i)].to_string()));
    }
    TSCOPE_CHECK(node->provenance().site.known() || !node->provenance().user_op.empty(),
                 "verifier: " + node->to_string() + " lost its provenance");
  }
}

namespace {
using PassFn = std::int64_t (*)(FunctionGraph&, const PipelineSettings&);
using LocalRulesFn = std::vector<LocalRule> (*)();

// A stage is a whole-graph pass or a set of local rules run to a fixed point. Either can be
// excluded by the stage's name; a local rule also by its own. A stage that `needs` another runs
// only when that one ran and changed the graph (excluding it excludes this one too).
struct Stage {
  std::string_view name;
  PassFn pass = nullptr;
  LocalRulesFn local_rules = nullptr;
  std::string_view needs;
};

std::vector<LocalRule> clamp_rules() { return {clamp_rule()}; }
std::vector<LocalRule> pow_rules() { return {pow_rule()}; }
std::vector<LocalRule> layer_norm_rules() { return {layer_norm_rule()}; }
std::vector<LocalRule> kernel_tap_rules() { return {kernel_tap_rule()}; }
std::vector<LocalRule> pointwise_pool_rules() { return {pointwise_pool_rule()}; }
std::vector<LocalRule> loop_rules() { return {loop_invariant_rule()}; }
std::vector<LocalRule> loop_sequence_rules() { return {loop_sequence_work_rule()}; }
std::vector<LocalRule> loop_accumulation_rules() { return {loop_accumulation_rule()}; }

// Order matters: loops first, so that what leaves a loop meets every later stage; BLAS products
// before layouts; kernels cropped, and average pools moved before pointwise convolutions, before
// the layout plan chooses their convolutions' layout; the blocked convolutions' fusions right
// after the layout change that creates them, and the remaining clamps after those (a blocked
// convolution absorbs its clamp); layer normalisations before
// elementwise fusion, which would fold their pieces into Composites; folding once the weight
// packing it folds exists; in-place writes last, since any later replacement would have to keep
// them valid.
constexpr Stage kStages[] = {
    {"merge_duplicate_nodes",
     [](FunctionGraph& graph, const PipelineSettings&) { return merge_duplicate_nodes(graph); }},
    {"hoist_loop_invariants", nullptr, loop_rules},
    {"merge_sibling_loops",
     [](FunctionGraph& graph, const PipelineSettings&) { return merge_sibling_loops(graph); }},
    {"push_out_sequence_work", nullptr, loop_sequence_rules},
    {"keep_last_steps_only",
     [](FunctionGraph& graph, const PipelineSettings&) { return keep_last_steps_only(graph); }},
    {"push_out_accumulated_products", nullptr, loop_accumulation_rules},
    {"use_blas_products", nullptr, blas_rules},
    {"crop_idle_kernel_taps", nullptr, kernel_tap_rules},
    {"pool_before_pointwise_conv", nullptr, pointwise_pool_rules},
    {"use_channel_blocks",
     [](FunctionGraph& graph, const PipelineSettings& settings) {
       return use_channel_blocks(graph, settings.channel_block, settings.winograd);
     }},
    {"fuse_channel_block_ops", nullptr, channel_block_fusion_rules, "use_channel_blocks"},
    {"specialize_pow", nullptr, pow_rules},
    {"fuse_clamps", nullptr, clamp_rules},
    {"fuse_layer_norms", nullptr, layer_norm_rules},
    {"fuse_elementwise",
     [](FunctionGraph& graph, const PipelineSettings&) { return fuse_elementwise(graph); }},
    {"fold_constant_layouts",
     [](FunctionGraph& graph, const PipelineSettings&) { return fold_constant_layouts(graph); }},
    {"use_inplace",
     [](FunctionGraph& graph, const PipelineSettings&) { return use_inplace(graph); }}};

bool is_excluded(std::span<const std::string> excluded, std::string_view name) {
  return std::ranges::find(excluded, name) != excluded.end();
}

RuleReport run_pass(FunctionGraph& graph,
                    const Stage& stage,
                    const PipelineSettings& settings,
                    Clock& clock) {
  RuleReport report{std::string(stage.name)};
  report.attempts = static_cast<std::int64_t>(graph.node_count());
  ChangeCounter counter(graph);  // not const: the graph calls it back
  const std::int64_t start_ns = clock.now_ns();
  report.changes = stage.pass(graph, settings);
  report.duration_ns = clock.now_ns() - start_ns;
  report.nodes_created = counter.created;
  report.nodes_removed = counter.removed;
  return report;
}

// Debug builds check the graph after every stage, so a rule that breaks the index or a type is
// caught where it did so.
void verify_after_stage(const FunctionGraph& graph) {
#ifndef NDEBUG
  graph.check_index();
  verify_graph(graph);
#else
  (void)graph;
#endif
}
}  // namespace

RewriteReport run_default_pipeline(FunctionGraph& graph,
                                   Clock& clock,
                                   const PipelineSettings& settings) {
  const std::span<const std::string> excluded = settings.excluded;
  const std::vector<std::string_view> known = default_rule_names();
  for (const std::string& name : excluded) {
    if (std::ranges::find(known, name) == known.end()) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("unknown rewrite '{}' to exclude; the rewrites are: {}", name,
                              fmt::join(known, ", ")));
    }
  }
  RewriteReport report;
  report.nodes_before = static_cast<std::int64_t>(graph.node_count());
  std::vector<std::string_view> changed_stages;
  for (const Stage& stage : kStages) {
    if (is_excluded(excluded, stage.name)) continue;
    if (!stage.needs.empty() &&
        std::ranges::find(changed_stages, stage.needs) == changed_stages.end()) {
      continue;
    }
    const std::size_t first_report = report.rules.size();
    if (stage.pass != nullptr) {
      report.rules.push_back(run_pass(graph, stage, settings, clock));
    } else {
      std::vector<LocalRule> rules = stage.local_rules();
      std::erase_if(rules, [&](const LocalRule& rule) { return is_excluded(excluded, rule.name); });
      apply_to_fixed_point(graph, rules, clock, report.rules);
    }
    const bool changed =
        std::any_of(report.rules.begin() + static_cast<std::ptrdiff_t>(first_report),
                    report.rules.end(), [](const RuleReport& rule) { return rule.changes > 0; });
    if (changed) changed_stages.push_back(stage.name);
    graph.release_replaced();
    verify_after_stage(graph);
  }
  const std::int64_t validate_start_ns = clock.now_ns();
  verify_graph(graph);
  report.validate_ns = clock.now_ns() - validate_start_ns;
  report.nodes_after = static_cast<std::int64_t>(graph.node_count());
  return report;
}

std::vector<std::string_view> default_rule_names() {
  std::vector<std::string_view> names;
  for (const Stage& stage : kStages) {
    names.push_back(stage.name);
    if (stage.local_rules == nullptr) continue;
    for (const LocalRule& rule : stage.local_rules()) {
      if (rule.name != stage.name) names.push_back(rule.name);
    }
  }
  return names;
}

}  // namespace tscope::rewrite
