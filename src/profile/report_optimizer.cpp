// SPDX-License-Identifier: Apache-2.0
// The "Optimizer Profile" section (Theano's optimizer/rewriter profile, flag profile_optimizer):
// one line for the pipeline (time, nodes before/after, validation), then one row per rewrite with
// its time, the nodes it looked at, the changes it made and the nodes those created and removed,
// costliest first. Functions sharing the profile are summed
// rewrite by rewrite, like Theano's merge_profile.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tscope/profile/report_text.h"

namespace tscope::profile {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

struct RewriteTotal {
  std::string name;
  std::int64_t duration_ns = 0;
  std::int64_t applied_count = 0;
  std::int64_t attempts = 0;
  std::int64_t nodes_created = 0;
  std::int64_t nodes_removed = 0;
};

}  // namespace

std::string render_optimizer_section(const Profile& profile) {
  std::string out = "Optimizer Profile\n-----------------\n";
  std::vector<RewriteTotal> rewrites;  // first-seen order, then sorted by time
  std::int64_t rewrite_ns = 0, validate_ns = 0, nodes_before = 0, nodes_after = 0;
  std::size_t functions = 0;
  for (const FunctionRecord& function : profile.functions) {
    const CompileRecord& compile = function.compile;
    if (compile.rewrites.empty()) continue;
    ++functions;
    rewrite_ns += compile.rewrite_ns;
    validate_ns += compile.validate_ns;
    nodes_before += compile.nodes_before_rewrite;
    nodes_after += compile.nodes_after_rewrite;
    for (const RewriteRecord& rewrite : compile.rewrites) {
      auto it = std::find_if(rewrites.begin(), rewrites.end(),
                             [&](const RewriteTotal& total) { return total.name == rewrite.name; });
      if (it == rewrites.end()) it = rewrites.insert(rewrites.end(), {rewrite.name});
      it->duration_ns += rewrite.duration_ns;
      it->applied_count += rewrite.applied_count;
      it->attempts += rewrite.attempts;
      it->nodes_created += rewrite.nodes_created;
      it->nodes_removed += rewrite.nodes_removed;
    }
  }
  if (functions == 0) return out + "  No rewrite was recorded.\n\n";
  std::stable_sort(rewrites.begin(), rewrites.end(),
                   [](const auto& a, const auto& b) { return a.duration_ns > b.duration_ns; });
  out += fmt::sprintf("  Rewrite pipeline time %.3es for %d/%d nodes before/after rewriting",
                      seconds(rewrite_ns), nodes_before, nodes_after);
  out += functions > 1 ? fmt::format(" ({} functions)\n", functions) : "\n";
  out += fmt::sprintf("      %.3es for validation (the verifier, once after all rewrites)\n",
                      seconds(validate_ns));
  out += "       <time> <% of rewriting> <#tried> <#applied> <+nodes> <-nodes> <rewrite>\n";
  for (const RewriteTotal& rewrite : rewrites) {
    const double percent = rewrite_ns > 0 ? 100.0 * static_cast<double>(rewrite.duration_ns) /
                                                static_cast<double>(rewrite_ns)
                                          : 0.0;
    out += fmt::sprintf("  %10.3es %15.1f%% %8d %10d %8d %8d %s\n", seconds(rewrite.duration_ns),
                        percent, rewrite.attempts, rewrite.applied_count, rewrite.nodes_created,
                        rewrite.nodes_removed, rewrite.name);
  }
  std::string unused;
  for (const RewriteTotal& rewrite : rewrites) {
    if (rewrite.applied_count == 0) unused += (unused.empty() ? "" : ", ") + rewrite.name;
  }
  if (!unused.empty()) out += "  Rewrites that never applied: " + unused + "\n";
  return out + "\n";
}

}  // namespace tscope::profile
