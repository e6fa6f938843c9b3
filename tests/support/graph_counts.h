// SPDX-License-Identifier: Apache-2.0
#pragma once
// What rewrite tests count in a compiled function's graph.
#include <map>
#include <string>

#include "tscope/tscope.h"

namespace tscope::testing {

/// How many nodes of each op (by registry name) the function's rewritten graph holds.
inline std::map<std::string, int> op_counts(const Function& f) {
  std::map<std::string, int> counts;
  for (const ApplyNode* node : f.graph().toposort()) ++counts[std::string(node->op().name)];
  return counts;
}

}  // namespace tscope::testing
