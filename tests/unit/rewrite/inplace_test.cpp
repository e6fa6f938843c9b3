// SPDX-License-Identifier: Apache-2.0
// use_inplace: which nodes may overwrite an input, and that overwriting never changes what any
// reader sees: caller inputs, shared values, constants, outputs, values read twice, views, results
// a caller keeps from an earlier call, with and without allow_gc, from several threads. Every test
// compares against the same graph compiled with the rule excluded.
#include <map>
#include <string>
#include <thread>

#include "support/test_util.h"
#include "tscope/profile/memory_model.h"

namespace tscope {
namespace {

// Elementwise fusion is left out so that single ops show which input they overwrite.
Function compile(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                 bool inplace, bool allow_gc = true, const std::vector<Update>& updates = {}) {
  FunctionOptions options;
  options.allow_gc = allow_gc;
  options.excluded_rewrites = {"fuse_elementwise"};
  if (!inplace) options.excluded_rewrites.emplace_back("use_inplace");
  return function(inputs, outputs, updates, options);
}

// op name -> the input it overwrites, for every marked node.
std::map<std::string, std::int64_t> marked(const Function& f) {
  std::map<std::string, std::int64_t> found;
  for (const ApplyNode* node : f.graph().toposort()) {
    const std::int64_t input = node->attrs().get_int_or("inplace", -1);
    if (input >= 0) found[std::string(node->op().name)] = input;
  }
  return found;
}

void expect_equal_outputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(testing::all_close(a[i], b[i], 0, 0)) << "output " << i;
  }
}

TEST(UseInplace, AChainOfIntermediatesIsWrittenInPlace) {
  Variable x = matrix(DType::Float32, "x");
  const Variable y = sqrt(exp(x * 0.5) + 1.0);
  for (bool allow_gc : {true, false}) {
    Function f = compile({x}, {y}, true, allow_gc);
    Function plain = compile({x}, {y}, false, allow_gc);
    EXPECT_EQ(marked(f), (std::map<std::string, std::int64_t>{{"Exp", 0}, {"Add", 0}, {"Sqrt", 0}}));
    EXPECT_TRUE(marked(plain).empty());
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const std::vector<Tensor> values{testing::random_tensor(DType::Float32, {6, 33}, seed)};
      expect_equal_outputs(f(values), plain(values));
    }
  }
  Function f = compile({x}, {y}, true);
  const ApplyNode* last = f.graph().outputs()[0].owner();
  EXPECT_EQ(last->op_string(), "Elemwise{sqrt}[(0, 0)]");
}

TEST(UseInplace, NeverOverwritesInputsSharedValuesConstantsOrOutputs) {
  Variable x = matrix(DType::Float64, "x");
  const Tensor weights = testing::random_tensor(DType::Float64, {4, 5}, 2);
  Variable w = shared(weights, "w");
  const Variable sum_xw = x + w;            // an input and a shared value: neither overwritten
  const Variable scaled = sum_xw * 2.0;     // sum_xw is also an output: kept
  const Variable shifted = scaled - 1.0;    // scaled may be overwritten
  Function f = compile({x}, {sum_xw, shifted}, true);
  Function plain = compile({x}, {sum_xw, shifted}, false);
  EXPECT_EQ(marked(f), (std::map<std::string, std::int64_t>{{"Sub", 0}}));
  const Tensor input = testing::random_tensor(DType::Float64, {4, 5}, 3);
  const std::vector<double> before = input.to_doubles();
  for (int call = 0; call < 3; ++call) expect_equal_outputs(f({input}), plain({input}));
  EXPECT_EQ(input.to_doubles(), before);
  EXPECT_EQ(w.get_value().to_doubles(), weights.to_doubles());
}

TEST(UseInplace, AValueReadTwiceOrThroughAViewIsNotOverwritten) {
  Variable x = matrix(DType::Float32, "x");
  const Variable e = exp(x);
  const Variable twice = (e + 1.0) * e;          // e has two readers
  const Variable l = log(x + 2.0);
  const Variable viewed = dimshuffle(l, {1, 0});  // a view of l, read by the Mul
  const Variable through_view = viewed * 3.0;     // viewed is a view: not overwritten
  const Variable broadcast = exp(sum(x, {1}, true)) + x;  // the exp is (n, 1): it broadcasts
  const std::vector<Variable> outputs{twice, through_view, broadcast};
  Function f = compile({x}, outputs, true);
  Function plain = compile({x}, outputs, false);
  for (const ApplyNode* node : f.graph().toposort()) {
    const std::int64_t input = node->attrs().get_int_or("inplace", -1);
    if (input < 0) continue;
    const Variable overwritten = node->input(static_cast<int>(input));
    EXPECT_NE(overwritten.node(), e.node()) << node->to_string();
    EXPECT_NE(overwritten.owner()->op().name, "DimShuffle") << node->to_string();
    EXPECT_EQ(overwritten.type().dims, node->output(0).type().dims) << node->to_string();
  }
  // e + 1.0 (e has two readers), x + 2.0 (an input) and exp(...) + x (the exp broadcasts) are not
  // marked; (e + 1.0) * e, the log and the exp of the (n, 1) sum are.
  EXPECT_EQ(marked(f), (std::map<std::string, std::int64_t>{{"Exp", 0}, {"Log", 0}, {"Mul", 0}}));
  const std::vector<Tensor> values{testing::random_tensor(DType::Float32, {5, 7}, 4, 0.0, 2.0)};
  expect_equal_outputs(f(values), plain(values));
}

// Without allow_gc the buffers of one call are reused by the next: in-place writes must neither
// allocate more per call nor let a later call change a result the caller still holds.
TEST(UseInplace, KeptBuffersStayReusedAndHeldResultsStayIntact) {
  Variable x = matrix(DType::Float32, "x");
  const Variable y = tanh(exp(x * 0.25) * 2.0) - 0.5;
  Function f = compile({x}, {y}, true, false);
  Function plain = compile({x}, {y}, false, false);
  const std::vector<Tensor> first{testing::random_tensor(DType::Float32, {16, 64}, 5)};
  const std::vector<Tensor> second{testing::random_tensor(DType::Float32, {16, 64}, 6)};
  auto allocations_per_call = [&](Function& g) {
    (void)g(first);
    (void)g(first);
    const std::int64_t before = default_allocator().stats().allocation_count;
    (void)g(first);
    return default_allocator().stats().allocation_count - before;
  };
  EXPECT_LE(allocations_per_call(f), allocations_per_call(plain));
  const Tensor held = f(first)[0];
  const std::vector<double> held_values = held.to_doubles();
  (void)f(second);
  (void)f(second);
  EXPECT_EQ(held.to_doubles(), held_values);
  expect_equal_outputs(f(second), plain(second));
}

TEST(UseInplace, UpdatesAndTheirSharedValuesStayCorrect) {
  const Tensor start = testing::random_tensor(DType::Float64, {3, 4}, 7);
  for (bool allow_gc : {true, false}) {
    Variable g = matrix(DType::Float64, "g");
    Variable w1 = shared(start, "w1");
    Variable w2 = shared(start, "w2");
    const Variable step = exp(g * 0.1) * 0.01;  // an intermediate the update may overwrite
    Function f = compile({g}, {}, true, allow_gc, {{w1, w1 - step}});
    Function plain = compile({g}, {}, false, allow_gc, {{w2, w2 - step}});
    for (std::uint64_t seed = 8; seed < 12; ++seed) {
      const std::vector<Tensor> values{testing::random_tensor(DType::Float64, {3, 4}, seed)};
      (void)f(values);
      (void)plain(values);
      EXPECT_EQ(w1.get_value().to_doubles(), w2.get_value().to_doubles());
    }
  }
}

TEST(UseInplace, CallsFromSeveralThreadsEachWriteTheirOwnBuffers) {
  Variable x = matrix(DType::Float32, "x");
  const Variable y = sqrt(exp(x * 0.5) + 1.0) * 3.0;
  Function f = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  constexpr int kThreads = 4;
  std::vector<std::vector<Tensor>> inputs;
  std::vector<Tensor> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back({testing::random_tensor(DType::Float32, {32, 40}, 20 + static_cast<std::uint64_t>(t))});
    expected.push_back(plain(inputs.back())[0]);
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 50; ++call) {
        const Tensor out = f(inputs[static_cast<std::size_t>(t)])[0];
        if (!testing::all_close(out, expected[static_cast<std::size_t>(t)], 0, 0)) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

// The memory profile marks the outputs 'i' and counts what they save; the peak with in-place
// writes disabled is the one of the same function compiled without them.
TEST(UseInplace, TheMemoryProfileMarksInPlaceOutputs) {
  Variable x = matrix(DType::Float32, "x");
  const Variable y = sqrt(exp(x * 0.5) + 1.0);
  FunctionOptions options;
  options.profile = true;
  options.excluded_rewrites = {"fuse_elementwise"};
  Function f = function({x}, {y}, {}, options);
  options.excluded_rewrites.emplace_back("use_inplace");
  Function plain = function({x}, {y}, {}, options);
  const std::vector<Tensor> values{testing::random_tensor(DType::Float32, {64, 64}, 9)};
  (void)f(values);
  (void)plain(values);
  const profile::FunctionRecord record = f.profile_record();
  const profile::FunctionRecord plain_record = plain.profile_record();
  int in_place = 0;
  for (const profile::NodeRecord& node : record.nodes) {
    if (node.output_alias[0] == "i") {
      ++in_place;
      EXPECT_EQ(node.output_alias_input[0], 0) << node.apply_name;
    }
  }
  EXPECT_EQ(in_place, 3);
  const auto order = profile::executed_order(record);
  const profile::MemoryRun with = profile::simulate_memory(record, order, true);
  const profile::MemoryRun without = profile::simulate_memory(record, order, false);
  EXPECT_EQ(with.saved_by_inplace_bytes, 3 * 64 * 64 * 4);
  EXPECT_LT(with.peak_bytes, without.peak_bytes);
  const profile::MemoryRun plain_run =
      profile::simulate_memory(plain_record, profile::executed_order(plain_record), true);
  EXPECT_EQ(without.peak_bytes, plain_run.peak_bytes);
}

TEST(UseInplace, CanBeExcludedByName) {
  Variable x = matrix(DType::Float32, "x");
  Function f = compile({x}, {exp(x * 2.0)}, false);
  EXPECT_TRUE(marked(f).empty());
  EXPECT_EQ(f.graph().outputs()[0].owner()->op_string(), "Elemwise{exp,no_inplace}");
}

}  // namespace
}  // namespace tscope
