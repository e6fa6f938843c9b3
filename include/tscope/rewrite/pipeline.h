// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The rewrite pipeline run by function(): an ordered list of stages over a FunctionGraph, then the
/// verifier. A stage is a whole-graph pass or a set of local rules (rule.h) run to a fixed point.
/// Stages: merge of duplicate nodes, BLAS products (Dot22 / Gemm), the channel-blocked layout for
/// convolutions and the fusion of their epilogues, clamp fusion, elementwise fusion (Composite),
/// and folding of constant weight packing.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/clock.h"
#include "tscope/graph/function_graph.h"
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

struct RewriteReport {
  std::vector<RuleReport> rules;  ///< passes and local rules, in the order they ran
  std::int64_t validate_ns = 0;
  std::int64_t nodes_before = 0;
  std::int64_t nodes_after = 0;
};

/// Replaces nodes equal to an earlier node (same op, attrs and inputs) by that node's outputs.
/// Returns the number of nodes merged.
std::int64_t merge_duplicate_nodes(FunctionGraph& graph);

/// Re-runs every node's type rule and checks the recorded output types and provenance; throws
/// Internal naming the node on a mismatch (a rewrite bug).
void verify_graph(const FunctionGraph& graph);

/// What a caller may choose about the pipeline (FunctionOptions carries both).
struct PipelineSettings {
  /// Rules to skip (names as in default_rule_names()); an unknown name is InvalidArgument.
  std::span<const std::string> excluded;
  /// use_channel_blocks' block: 8 or 16, or 0 to let the rule choose.
  std::int64_t channel_block = 0;
  /// Whether use_channel_blocks may choose Winograd for 3x3 stride-1 convolutions.
  bool winograd = true;
};

/// Runs every rule except those `settings` excludes.
[[nodiscard]] RewriteReport run_default_pipeline(FunctionGraph& graph, Clock& clock,
                                                 const PipelineSettings& settings = {});

/// The names FunctionOptions::excluded_rewrites accepts, in the order they run: each stage, and
/// after a stage of local rules the rules' own names.
[[nodiscard]] std::vector<std::string_view> default_rule_names();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
