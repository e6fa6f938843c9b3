// SPDX-License-Identifier: Apache-2.0
// Folded stacks over profiles with known numbers: graph functions alone, and graph functions
// called from host zones, their node time shared between the zone paths that called them.
#include "tscope/profile/report_folded.h"

#include "support/test_util.h"

namespace tscope {
namespace {

using profile::FunctionRecord;
using profile::NodeRecord;
using profile::Profile;

NodeRecord make_node(std::string apply_name, std::string class_name, std::int64_t total_ns) {
  NodeRecord node;
  node.apply_name = std::move(apply_name);
  node.class_name = std::move(class_name);
  node.call_count = 1;
  node.total_ns = total_ns;
  return node;
}

Profile train_profile() {
  FunctionRecord function;
  function.name = "train";
  function.call_count = 2;
  function.call_ns = 1000;
  function.nodes = {make_node("Dot(x, w)", "Dot", 600),
                    make_node("Elemwise{add}(a;b)\n", "Elemwise", 300)};
  Profile profile;
  profile.functions = {function};
  return profile;
}

TEST(FoldedStacks, FunctionClassNodeWithTheCallsOwnTime) {
  EXPECT_EQ(profile::render_folded(train_profile()),
            "train 100\n"
            "train;Dot;Dot(x, w) 600\n"
            "train;Elemwise;Elemwise{add}(a,b)  300\n");
}

TEST(FoldedStacks, ZonesHoldTheFunctionsTheyCalledSharedByTime) {
  Profile profile = train_profile();
  FunctionRecord unreached;
  unreached.name = "eval";
  unreached.call_ns = 50;
  unreached.nodes = {make_node("Exp(y)", "Elemwise", 40)};
  profile.functions.push_back(unreached);
  profile.host.sites = {{.name = "step", .file = "t.cpp", .line = 1, .kind = "zone"},
                        {.name = "load", .file = "t.cpp", .line = 2, .kind = "zone"},
                        {.name = "train", .kind = "function"}};
  // step (2000 ns, 200 own) calls load (500) and train (1300); train also runs outside any zone
  // (700): the two paths share train's node time 65% / 35%.
  profile.host.threads = {
      {.nodes = {{.site = 0, .parent = -1, .call_count = 1, .total_ns = 2000, .self_ns = 200},
                 {.site = 1, .parent = 0, .call_count = 1, .total_ns = 500, .self_ns = 500},
                 {.site = 2, .parent = 0, .call_count = 1, .total_ns = 1300, .self_ns = 1300},
                 {.site = 2, .parent = -1, .call_count = 1, .total_ns = 700, .self_ns = 700}}}};
  EXPECT_EQ(profile::render_folded(profile),
            "step 200\n"
            "step;load 500\n"
            "step;train;Dot;Dot(x, w) 390\n"
            "step;train;Elemwise;Elemwise{add}(a,b)  195\n"
            "step;train 715\n"
            "train;Dot;Dot(x, w) 210\n"
            "train;Elemwise;Elemwise{add}(a,b)  105\n"
            "train 385\n"
            "eval 10\n"
            "eval;Elemwise;Exp(y) 40\n");
  // Every nanosecond of the zones is in exactly one line, plus the unreached function's call.
  std::int64_t sum = 0;
  for (const profile::FoldedStack& stack : profile::folded_stacks(profile)) sum += stack.self_ns;
  EXPECT_EQ(sum, 2000 + 700 + 50);
}

TEST(FoldedStacks, EmptyProfileWritesNothing) { EXPECT_EQ(profile::render_folded(Profile{}), ""); }

}  // namespace
}  // namespace tscope
