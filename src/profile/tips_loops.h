// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tip rules about loops (tips_loops.cpp): loop_overhead and loop_invariant.
#include <vector>

#include "tscope/profile/tips.h"

namespace tscope::profile::detail {

/// For each loop of `function` (its own; nested loops get theirs in their parent's body):
/// loop_overhead when most of the loop's time is spent outside its body's kernels, and
/// loop_invariant when body nodes that give the same result at every step run in the loop.
void loop_tips(const FunctionRecord& function, std::vector<Tip>& tips);

}  // namespace tscope::profile::detail
