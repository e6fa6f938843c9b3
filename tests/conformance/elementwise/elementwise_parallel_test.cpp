// SPDX-License-Identifier: Apache-2.0
// Long elementwise loops split into chunks on the worker threads (tscope/threads/parallel_for.h,
// whose chunking tests/unit/threads tests): every loop shape gives the serial result bit for bit
// and matches the reference kernels.
#include <vector>

#include "support/test_util.h"

namespace tscope {
namespace {
struct LoopCase {
  const char* name;
  std::vector<Dims> shapes;
  DType dtype;
  Variable (*build)(const std::vector<Variable>&);
};

void PrintTo(const LoopCase& c, std::ostream* os) { *os << c.name; }

class ParallelElementwise : public ::testing::TestWithParam<LoopCase> {};

// 70001 elements: three chunks at three threads, none a whole number of rows or vectors.
TEST_P(ParallelElementwise, ThreeThreadsGiveTheSerialResultAndMatchTheReference) {
  const LoopCase& c = GetParam();
  std::vector<Variable> inputs;
  std::vector<Tensor> values;
  for (std::size_t i = 0; i < c.shapes.size(); ++i) {
    inputs.push_back(tensor(c.dtype, c.shapes[i], "in" + std::to_string(i)));
    values.push_back(testing::random_tensor(c.dtype, c.shapes[i], 31 + i, -3.0, 3.0));
  }
  const Variable output = c.build(inputs);
  std::vector<Tensor> serial;
  {
    const threads::ScopedThreadCount one_thread(1);
    serial = testing::run_graph(inputs, {output}, values);
  }
  const threads::ScopedThreadCount three_threads(3);
  const std::vector<Tensor> parallel = testing::run_graph(inputs, {output}, values);
  EXPECT_TRUE(testing::all_close(parallel[0], serial[0], 0.0, 0.0));
  EXPECT_TRUE(testing::fast_matches_reference(inputs, {output}, values, 1e-5, 1e-6));
}

const Dims kLong{70001};

INSTANTIATE_TEST_SUITE_P(
    Loops,
    ParallelElementwise,
    ::testing::Values(
        LoopCase{"AllFull",
                 {kLong, kLong},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return add(in[0], in[1]); }},
        LoopCase{"RowBroadcast",
                 {Dims{71, 1001}, Dims{1001}},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return add(in[0], in[1]); }},
        LoopCase{"ScalarOperand",
                 {kLong, Dims{}},
                 DType::Float64,
                 [](const std::vector<Variable>& in) { return mul(in[1], in[0]); }},
        LoopCase{"ScalarBounds",
                 {kLong, Dims{}, Dims{}},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return clip(in[0], in[1], in[2]); }},
        LoopCase{"ConvertedOutput",
                 {kLong, kLong},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return gt(in[0], in[1]); }},
        LoopCase{"SimdFloat32",
                 {kLong},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return exp(in[0]); }},
        LoopCase{"SimdFloat64",
                 {kLong},
                 DType::Float64,
                 [](const std::vector<Variable>& in) { return exp(in[0]); }},
        // The strided walk, in parts of whole rows: an operand broadcast over a leading axis (an
        // attention bias), and a transposed view times a scalar.
        LoopCase{"StridedBroadcast",
                 {Dims{40, 3, 49, 13}, Dims{3, 49, 13}},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return add(in[0], in[1]); }},
        LoopCase{"StridedView",
                 {Dims{301, 233}, Dims{}},
                 DType::Float32,
                 [](const std::vector<Variable>& in) { return mul(transpose(in[0]), in[1]); }}),
    [](const ::testing::TestParamInfo<LoopCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tscope
