// SPDX-License-Identifier: Apache-2.0
#include "tscope/rewrite/pipeline.h"
#include "tscope/rewrite/blas_rules.h"
#include "tscope/rewrite/channel_block_rules.h"
#include "tscope/rewrite/clamp_rules.h"
#include "tscope/rewrite/constant_folding.h"
#include "tscope/rewrite/fusion_rules.h"

#include <algorithm>

#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tscope/core/error.h"

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
  // Replacing a node's outputs can drop its last owner; keep every node of the walk alive until
  // the pass ends so the raw pointers below stay valid.
  std::vector<std::shared_ptr<ApplyNode>> alive;
  for (ApplyNode* node : graph.toposort()) alive.push_back(node->shared_from_this());
  std::unordered_map<NodeKey, ApplyNode*, NodeKeyHash> seen;
  for (const std::shared_ptr<ApplyNode>& node : alive) {
    NodeKey key{&node->op(), node->attrs().hash(), {}};
    for (const Variable& input : node->inputs()) key.inputs.push_back(input.node());
    auto [it, inserted] = seen.try_emplace(key, node.get());
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
    const std::vector<Type> types = node->op().infer(InferContext{node->op(), node->inputs(), node->attrs()});
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
struct Rule {
  std::string_view name;
  std::int64_t (*apply)(FunctionGraph&, const PipelineSettings&);
};
// Order matters: BLAS products before layouts, clamps after them (a blocked convolution absorbs
// its clamp), and folding last, once the weight packing it folds exists.
constexpr Rule kRules[] = {
    {"merge_duplicate_nodes",
     [](FunctionGraph& graph, const PipelineSettings&) { return merge_duplicate_nodes(graph); }},
    {"use_blas_products",
     [](FunctionGraph& graph, const PipelineSettings&) { return use_blas_products(graph); }},
    {"use_channel_blocks",
     [](FunctionGraph& graph, const PipelineSettings& settings) {
       return use_channel_blocks(graph, settings.channel_block, settings.winograd);
     }},
    {"fuse_clamps",
     [](FunctionGraph& graph, const PipelineSettings&) { return fuse_clamps(graph); }},
    {"fuse_elementwise",
     [](FunctionGraph& graph, const PipelineSettings&) { return fuse_elementwise(graph); }},
    {"fold_constant_layouts",
     [](FunctionGraph& graph, const PipelineSettings&) { return fold_constant_layouts(graph); }}};
}  // namespace

RewriteReport run_default_pipeline(FunctionGraph& graph, Clock& clock,
                                   const PipelineSettings& settings) {
  const std::span<const std::string> excluded = settings.excluded;
  for (const std::string& name : excluded) {
    if (std::ranges::find(kRules, name, &Rule::name) == std::end(kRules)) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("unknown rewrite '{}' to exclude; the rewrites are: {}", name,
                              fmt::join(default_rule_names(), ", ")));
    }
  }
  RewriteReport report;
  report.nodes_before = static_cast<std::int64_t>(graph.node_count());
  for (const Rule& rule : kRules) {
    if (std::ranges::find(excluded, rule.name) != excluded.end()) continue;
    const std::int64_t start_ns = clock.now_ns();
    const std::int64_t changes = rule.apply(graph, settings);
    report.rules.push_back({std::string(rule.name), clock.now_ns() - start_ns, changes});
    graph.release_replaced();
  }
  const std::int64_t validate_start_ns = clock.now_ns();
  verify_graph(graph);
  report.validate_ns = clock.now_ns() - validate_start_ns;
  report.nodes_after = static_cast<std::int64_t>(graph.node_count());
  return report;
}

std::vector<std::string_view> default_rule_names() {
  std::vector<std::string_view> names;
  for (const Rule& rule : kRules) names.push_back(rule.name);
  return names;
}

}  // namespace tscope::rewrite
