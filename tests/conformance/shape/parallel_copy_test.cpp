// SPDX-License-Identifier: Apache-2.0
// A Reshape that copies a long strided view does it in blocks of the leading axes on the worker
// threads (src/ops/shape/parallel_copy.h): at three threads it gives the serial result bit for bit
// and the reference kernels' values, whatever the leading axes' extents.
#include <vector>

#include "support/test_util.h"

namespace tscope {
namespace {
struct CopyCase {
  const char* name;
  Dims shape;
  DType dtype;
  Variable (*build)(const Variable&);
};

void PrintTo(const CopyCase& c, std::ostream* os) { *os << c.name; }

class ParallelReshapeCopy : public ::testing::TestWithParam<CopyCase> {};

TEST_P(ParallelReshapeCopy, ThreeThreadsGiveTheSerialResultAndMatchTheReference) {
  const CopyCase& c = GetParam();
  const Variable x = tensor(c.dtype, c.shape, "x");
  const Variable y = c.build(x);
  const std::vector<Tensor> values{testing::random_tensor(c.dtype, c.shape, 7, -50.0, 50.0)};
  std::vector<Tensor> serial;
  {
    const threads::ScopedThreadCount one_thread(1);
    serial = testing::run_graph({x}, {y}, values);
  }
  const threads::ScopedThreadCount three_threads(3);
  const std::vector<Tensor> parallel = testing::run_graph({x}, {y}, values);
  EXPECT_TRUE(testing::all_close(parallel[0], serial[0], 0.0, 0.0));
  EXPECT_TRUE(testing::fast_matches_reference({x}, {y}, values, 0.0, 0.0));
}

INSTANTIATE_TEST_SUITE_P(
    Views,
    ParallelReshapeCopy,
    ::testing::Values(
        // Windows of a (batch 2, 16, 16, C) image: the batch alone gives too few blocks.
        CopyCase{"WindowPartition", Dims{2, 16, 16, 40}, DType::Float32,
                 [](const Variable& x) {
                   const Variable windows = reshape(x, {2, 2, 8, 2, 8, 40});
                   return reshape(dimshuffle(windows, {0, 1, 3, 2, 4, 5}), {-1, 64, 40});
                 }},
        // Heads split from a (tokens, heads, dim) product: a transpose of the leading axes.
        CopyCase{"HeadSplit", Dims{197, 12, 17}, DType::Float64,
                 [](const Variable& x) {
                   return reshape(dimshuffle(x, {1, 0, 2}), {12, -1});
                 }},
        // A transposed matrix, whose innermost axis is strided, and an integer dtype.
        CopyCase{"Transpose", Dims{301, 233}, DType::Int32,
                 [](const Variable& x) { return reshape(transpose(x), {-1}); }},
        // A leading axis of 1 before the long ones.
        CopyCase{"UnitLeadingAxis", Dims{1, 173, 211}, DType::Float32,
                 [](const Variable& x) {
                   return reshape(dimshuffle(x, {0, 2, 1}), {211, 173});
                 }}),
    [](const ::testing::TestParamInfo<CopyCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tscope
