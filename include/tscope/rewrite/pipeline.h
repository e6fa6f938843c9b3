// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The rewrite pipeline run by function(): an ordered list of rules over a FunctionGraph, each
/// followed by the verifier. Today: merge of duplicate nodes. Later rules (constant folding,
/// fusion, gemm, inplace) plug in here.
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/core/clock.h"
#include "tscope/graph/function_graph.h"

namespace tscope::rewrite {

struct RuleReport {
  std::string name;
  std::int64_t duration_ns = 0;
  std::int64_t changes = 0;
};

struct RewriteReport {
  std::vector<RuleReport> rules;
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

[[nodiscard]] RewriteReport run_default_pipeline(FunctionGraph& graph, Clock& clock);

}  // namespace tscope::rewrite
