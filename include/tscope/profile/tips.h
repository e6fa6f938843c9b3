// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The Tips section: heuristics over a Profile, each naming the node and estimating the gain.
/// A pure function of the profile, so `tscope report` prints the same tips as the live run.
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct Tip {
  std::string rule;  ///< stable rule name: "float64", "ref_kernel", "dot_not_blas", ...
  std::string text;  ///< one paragraph, without the leading "  - "
};

/// Every tip that fires, in rule order then node order.
[[nodiscard]] std::vector<Tip> collect_tips(const Profile& profile);

/// The section: the intro and one "  - " line per tip, or "Sorry, no tip for today.".
[[nodiscard]] std::string render_tips(const Profile& profile);

}  // namespace tscope::profile

#pragma GCC visibility pop
