// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/profile.h"

namespace tscope::profile {

std::int64_t Profile::kernel_ns() const {
  std::int64_t total = 0;
  for (const FunctionRecord& function : functions) {
    for (const NodeRecord& node : function.nodes) total += node.total_ns;
  }
  return total;
}

}  // namespace tscope::profile
