// SPDX-License-Identifier: Apache-2.0
// Dot22, Gemm, Gemv, Ger and BatchedDot: BLAS kernels against the reference loops on odd sizes,
// batch 1, transposed and strided inputs, float32 and float64; gradients by finite differences.
#include <algorithm>
#include <ostream>
#include <thread>

#include "support/test_util.h"

namespace tscope {
namespace {
enum class Layout { Contiguous, Transposed, Strided };

struct BlasCase {
  std::string name;
  std::string op;
  std::int64_t batch, m, k, n;
  DType dtype;
  Layout layout;
};

void PrintTo(const BlasCase& c, std::ostream* os) { *os << c.name; }

// The values of `value` (rank 2 or 3) in a buffer whose last two axes are swapped, seen through a
// transposing view: BLAS reads it with a transpose flag instead of a copy.
Tensor transposed_layout(const Tensor& value) {
  const int rank = value.rank();
  if (rank < 2) return testing::non_contiguous_copy(value);
  const std::int64_t rows = value.shape()[rank - 2];
  const std::int64_t cols = value.shape()[rank - 1];
  const std::int64_t batch = rank == 3 ? value.shape()[0] : 1;
  std::vector<double> swapped(static_cast<std::size_t>(value.numel()));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        swapped[static_cast<std::size_t>((b * cols + j) * rows + i)] =
            value.at((b * rows + i) * cols + j);
      }
    }
  }
  Dims base_shape = value.shape();
  base_shape[rank - 2] = cols;
  base_shape[rank - 1] = rows;
  const Tensor base = Tensor::from_doubles(value.dtype(), base_shape, swapped);
  Dims strides = value.shape();
  if (rank == 3) strides[0] = rows * cols;
  strides[rank - 2] = 1;
  strides[rank - 1] = rows;
  return base.view(value.shape(), strides, 0);
}

Tensor with_layout(const Tensor& value, Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return value;
    case Layout::Transposed: return transposed_layout(value);
    case Layout::Strided: return testing::non_contiguous_copy(value);
  }
  return value;
}

// Input shapes and the graph of one op.
struct OpGraph {
  std::vector<Dims> shapes;
  std::function<Variable(const std::vector<Variable>&)> build;
};

OpGraph op_graph(const BlasCase& c) {
  if (c.op == "Dot22") {
    return {{{c.m, c.k}, {c.k, c.n}}, [](const auto& v) { return dot22(v[0], v[1]); }};
  }
  if (c.op == "Gemm") {
    return {{{c.n}, {c.m, c.k}, {c.k, c.n}},
            [](const auto& v) { return gemm(v[0], v[1], v[2], 0.5, 2.0); }};
  }
  if (c.op == "GemmFullZ") {
    return {{{c.m, c.n}, {c.m, c.k}, {c.k, c.n}},
            [](const auto& v) { return gemm(v[0], v[1], v[2], -1.5, 0.25); }};
  }
  if (c.op == "Gemv") {
    return {{{c.m}, {c.m, c.k}, {c.k}}, [](const auto& v) { return gemv(v[0], v[1], v[2], 1.5, 0.5); }};
  }
  if (c.op == "Ger") {
    return {{{c.m, c.n}, {c.m}, {c.n}}, [](const auto& v) { return ger(v[0], v[1], v[2], -0.75); }};
  }
  return {{{c.batch, c.m, c.k}, {c.batch, c.k, c.n}},
          [](const auto& v) { return batched_dot(v[0], v[1]); }};
}

class BlasOps : public ::testing::TestWithParam<BlasCase> {};

TEST_P(BlasOps, BlasKernelMatchesReference) {
  const BlasCase& c = GetParam();
  const OpGraph graph = op_graph(c);
  std::vector<Variable> inputs;
  std::vector<Tensor> values;
  for (std::size_t i = 0; i < graph.shapes.size(); ++i) {
    inputs.push_back(tensor(c.dtype, graph.shapes[i], "in" + std::to_string(i)));
    values.push_back(with_layout(testing::random_tensor(c.dtype, graph.shapes[i], 11 + i), c.layout));
  }
  const double tolerance = c.dtype == DType::Float32 ? 1e-4 : 1e-10;
  EXPECT_TRUE(testing::fast_matches_reference(inputs, {graph.build(inputs)}, values, tolerance,
                                              tolerance));
  if (c.op.starts_with("Gemm")) {
    // Float32 Gemm runs oneDNN's sgemm on the OpenMP threads: at one thread too.
    const threads::ScopedThreadCount one_thread(1);
    EXPECT_TRUE(testing::fast_matches_reference(inputs, {graph.build(inputs)}, values, tolerance,
                                                tolerance));
  }
}

std::vector<BlasCase> blas_cases() {
  std::vector<BlasCase> cases;
  const std::vector<std::string> ops = {"Dot22", "Gemm", "GemmFullZ", "Gemv", "Ger", "BatchedDot"};
  struct Size {
    const char* name;
    std::int64_t batch, m, k, n;
  };
  // "wide" is large enough for oneDNN's sgemm (Gemm's float32 kernel) to take its blocked path.
  const std::vector<Size> sizes = {
      {"3x5x7", 3, 3, 5, 7}, {"batch1", 1, 1, 5, 7}, {"k1", 2, 4, 1, 3}, {"wide", 2, 40, 150, 70}};
  const std::vector<std::pair<Layout, const char*>> layouts = {
      {Layout::Contiguous, "contig"}, {Layout::Transposed, "transposed"}, {Layout::Strided, "strided"}};
  for (const std::string& op : ops) {
    for (const Size& size : sizes) {
      for (const auto& [layout, layout_name] : layouts) {
        for (DType dtype : {DType::Float32, DType::Float64}) {
          cases.push_back({op + "_" + std::string(dtype == DType::Float32 ? "f32" : "f64") + "_" +
                               size.name + "_" + layout_name,
                           op, size.batch, size.m, size.k, size.n, dtype, layout});
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, BlasOps, ::testing::ValuesIn(blas_cases()),
                         [](const auto& info) { return info.param.name; });

class BlasGradients : public ::testing::TestWithParam<std::string> {};

TEST_P(BlasGradients, MatchFiniteDifferences) {
  const OpGraph graph = op_graph({GetParam(), GetParam(), 2, 3, 4, 5, DType::Float64, Layout::Contiguous});
  std::vector<Tensor> point;
  for (std::size_t i = 0; i < graph.shapes.size(); ++i) {
    point.push_back(testing::random_tensor(DType::Float64, graph.shapes[i], 21 + i));
  }
  EXPECT_TRUE(testing::gradient_matches_numeric(graph.build, point));
}

INSTANTIATE_TEST_SUITE_P(Ops, BlasGradients,
                         ::testing::Values("Dot22", "Gemm", "GemmFullZ", "Gemv", "Ger", "BatchedDot"),
                         [](const auto& info) { return info.param; });

TEST(Gemm, ColumnTermBroadcastsAndGradientSumsIt) {
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return gemm(v[0], v[1], v[2], 1.0, 3.0); },
      {testing::random_tensor(DType::Float64, {3, 1}, 1), testing::random_tensor(DType::Float64, {3, 2}, 2),
       testing::random_tensor(DType::Float64, {2, 4}, 3)}));
}

TEST(Gemm, ProfileNamesTheLibraryEachNodeRuns) {
  // Every gemm-backed op multiplies float32 on oneDNN's sgemm and float64 on BLAS, at any thread
  // count, so float32 products never wake OpenBLAS's thread pool.
  for (const std::string op : {"Gemm", "Dot22", "Dot", "BatchedDot"}) {
    SCOPED_TRACE(op);
    const KernelImpl& fast = op_def(op).fast;
    const auto label = [&](DType dtype) {
      const int rank = op == "BatchedDot" ? 3 : 2;
      std::vector<Variable> inputs;
      for (int i = 0; i < op_def(op).num_inputs; ++i) {
        inputs.push_back(rank == 3 ? tensor3(dtype, "x") : matrix(dtype, "x"));
      }
      return std::string(fast.name_for(inputs, Attrs{{"alpha", 1.0}, {"beta", 1.0}}));
    };
    for (int threads : {1, 2}) {
      const threads::ScopedThreadCount count(threads);
      EXPECT_EQ(label(DType::Float32), "dnnl");
      EXPECT_EQ(label(DType::Float64), "blas");
    }
    EXPECT_EQ(fast.name, std::string("blas"));
  }
}

// Constant weights (and the transpose of constant weights: ONNX Gemm with transB) with a bias
// row or a full addend run oneDNN's matmul on weights packed once per batch size; each call must
// still match the reference kernel as the batch size changes and comes back.
TEST(Gemm, ConstantWeightsMatchReferenceAcrossBatchSizes) {
  const Tensor w_value = testing::random_tensor(DType::Float32, {70, 40}, 21);  // (out, in)
  const Variable w = constant(w_value, "w");
  const Variable w_in_out = constant(testing::random_tensor(DType::Float32, {40, 70}, 22), "w2");
  const Variable bias = constant(testing::random_tensor(DType::Float32, {70}, 23), "b");
  Variable x = matrix(DType::Float32, "x");
  Variable z = matrix(DType::Float32, "z");
  Variable z_t = matrix(DType::Float32, "z_t");
  const std::vector<Variable> outputs{
      gemm(bias, x, transpose(w), 1.0, 1.0),                         // transB, bias row: packed
      gemm(bias, x, w_in_out, 1.0, 0.0),                             // no bias: packed
      gemm(bias, x, w_in_out, 2.0, 1.0),                             // alpha 2: dnnl_sgemm
      gemm(dimshuffle(bias, {kNewAxis, 0}), x, w_in_out, 1.0, 1.0),  // (1, n) bias: packed
      gemm(z, x, w_in_out, 1.0, 1.0),               // (m, n) addend: packed, added by a post-op
      gemm(transpose(z_t), x, w_in_out, 1.0, 1.0),  // the addend column-major: the same
      gemm(z, x, w_in_out, 1.0, 0.5)};              // beta 0.5: dnnl_sgemm
  FunctionOptions reference_options;
  reference_options.reference_kernels = true;
  Function fast = function({x, z, z_t}, outputs);
  Function reference = function({x, z, z_t}, outputs, {}, reference_options);
  for (std::int64_t m : {5, 33, 5, 1}) {
    SCOPED_TRACE(m);
    const int seed = 30 + static_cast<int>(m);
    const Tensor xv = testing::random_tensor(DType::Float32, {m, 40}, seed);
    const Tensor zv = testing::random_tensor(DType::Float32, {m, 70}, seed + 100);
    const Tensor z_tv = testing::random_tensor(DType::Float32, {70, m}, seed + 200);
    const std::vector<Tensor> got = fast({xv, zv, z_tv});
    const std::vector<Tensor> expected = reference({xv, zv, z_tv});
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(testing::all_close(got[i], expected[i], 1e-4, 1e-5)) << "output " << i;
    }
  }
}

// Weights that change from call to call with a transposed addend (a loop's weight-gradient
// accumulator) run on oneDNN's matmul reading both as they are; other addends on dnnl_sgemm.
TEST(Gemm, ChangingWeightsWithATransposedAddendMatchReference) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  Variable z_t = matrix(DType::Float32, "z_t");
  Variable z = matrix(DType::Float32, "z");
  const std::vector<Variable> outputs{gemm(transpose(z_t), x, w, 1.0, 1.0),
                                      gemm(transpose(z_t), transpose(x), w, 1.0, 1.0),
                                      gemm(z, x, w, 1.0, 1.0)};
  for (std::int64_t m : {12, 3}) {
    SCOPED_TRACE(m);
    const int seed = 40 + static_cast<int>(m);
    EXPECT_TRUE(
        testing::fast_matches_reference({x, w, z_t, z}, {outputs[0], outputs[2]},
                                        {testing::random_tensor(DType::Float32, {m, 9}, seed),
                                         testing::random_tensor(DType::Float32, {9, 20}, seed + 1),
                                         testing::random_tensor(DType::Float32, {20, m}, seed + 2),
                                         testing::random_tensor(DType::Float32, {m, 20}, seed + 3)},
                                        1e-4, 1e-5));
    EXPECT_TRUE(
        testing::fast_matches_reference({x, w, z_t}, {outputs[1]},
                                        {testing::random_tensor(DType::Float32, {9, m}, seed),
                                         testing::random_tensor(DType::Float32, {9, 20}, seed + 1),
                                         testing::random_tensor(DType::Float32, {20, m}, seed + 2)},
                                        1e-4, 1e-5));
  }
}

// Column-major weights that change from call to call (a trained Linear layer's W^T) run on
// oneDNN's matmul reading them as they are from 16 rows on, and on dnnl_sgemm below; both, with
// a bias row, a full addend or none, match the reference.
TEST(Gemm, ChangingColumnMajorWeightsMatchReference) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  Variable bias = vector(DType::Float32, "bias");
  Variable z = matrix(DType::Float32, "z");
  const std::vector<Variable> outputs{gemm(bias, x, transpose(w), 1.0, 1.0),
                                      gemm(z, x, transpose(w), 1.0, 1.0),
                                      gemm(z, x, transpose(w), 1.0, 0.0)};
  for (std::int64_t m : {40, 16, 15, 3}) {
    SCOPED_TRACE(m);
    const int seed = 60 + static_cast<int>(m);
    EXPECT_TRUE(
        testing::fast_matches_reference({x, w, bias, z}, outputs,
                                        {testing::random_tensor(DType::Float32, {m, 33}, seed),
                                         testing::random_tensor(DType::Float32, {21, 33}, seed + 1),
                                         testing::random_tensor(DType::Float32, {21}, seed + 2),
                                         testing::random_tensor(DType::Float32, {m, 21}, seed + 3)},
                                        1e-4, 1e-5));
  }
}

// Shared weights change between calls (updates), so they are never packed once and kept.
TEST(Gemm, SharedWeightsAreReadOnEveryCall) {
  const Variable w = shared(testing::random_tensor(DType::Float32, {40, 70}, 24), "w");
  const Variable bias = constant(testing::random_tensor(DType::Float32, {70}, 25), "b");
  Variable x = matrix(DType::Float32, "x");
  Function f = function({x}, {gemm(bias, x, w, 1.0, 1.0)}, {{w, w * 2.0}});
  const Tensor xv = testing::random_tensor(DType::Float32, {8, 40}, 26);
  const Tensor first = f({xv})[0];   // with w, then w becomes 2w
  const Tensor second = f({xv})[0];  // with 2w: second - bias = 2 (first - bias)
  const std::vector<double> a = first.to_doubles();
  const std::vector<double> b = second.to_doubles();
  const std::vector<double> bias_values = testing::random_tensor(DType::Float32, {70}, 25).to_doubles();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double bias_i = bias_values[i % 70];
    EXPECT_NEAR(b[i] - bias_i, 2.0 * (a[i] - bias_i), 1e-3) << i;
  }
}

TEST(Gemm, PrintsLikeTheano) {
  Variable z = matrix(DType::Float32, "z");
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  EXPECT_EQ(gemm(z, x, y).owner()->op_string(), "Gemm{no_inplace}");
  EXPECT_EQ(dot22(x, y).owner()->op_string(), "Dot22");
}

TEST(Gemm, CostCountsMultiplyAddsAndTheScaledTerm) {
  const OpDef& op = op_def("Gemm");
  const std::vector<Dims> in = {Dims{7}, Dims{3, 5}, Dims{5, 7}};
  const std::vector<Dims> out = {Dims{3, 7}};
  const std::vector<DType> dtypes(3, DType::Float32);
  const Attrs attrs{{"alpha", 1.0}, {"beta", 1.0}};
  const Cost cost = op.cost(CostContext{op, in, out, dtypes, attrs});
  EXPECT_EQ(cost.flops, 2.0 * 3 * 5 * 7 + 2.0 * 3 * 7);
  EXPECT_EQ(cost.bytes, (7.0 + 15 + 35 + 21) * 4);
}

TEST(BlasOps, MixedDtypesAreATypeError) {
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float64, "y");
  Variable i = matrix(DType::Int32, "i");
  try {
    (void)dot22(x, y);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
  }
  EXPECT_THROW((void)gemm(x, i, i), Error);
  EXPECT_THROW((void)batched_dot(x, x), Error);
}

TEST(BlasOps, StaticShapeMismatchIsReportedAtBuildTime) {
  Variable x = matrix(DType::Float32, "x", {3, 4});
  Variable y = matrix(DType::Float32, "y", {5, 2});
  Variable z = vector(DType::Float32, "z", {6});
  try {
    (void)dot22(x, y);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("(3, 4)"), std::string::npos) << error.what();
  }
  Variable w = matrix(DType::Float32, "w", {4, 2});
  EXPECT_THROW((void)gemm(z, x, w), Error);
  EXPECT_THROW((void)ger(x, z, vector(DType::Float32, "v", {4})), Error);
}

TEST(BlasOps, CallTimeShapeMismatchNamesTheNode) {
  Variable z = vector(DType::Float64, "z");
  Variable a = matrix(DType::Float64, "a");
  Variable x = vector(DType::Float64, "x");
  Function f = function({z, a, x}, {gemv(z, a, x)});
  try {
    (void)f({Tensor::zeros(DType::Float64, {3}), Tensor::zeros(DType::Float64, {3, 4}),
             Tensor::zeros(DType::Float64, {5})});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string what = error.what();
    EXPECT_NE(what.find("(3, 4)"), std::string::npos) << what;
    EXPECT_NE(what.find("blas_ops_test.cpp"), std::string::npos) << what;
  }
}

TEST(BlasOps, TransposedInputsNeedNoCopyButStridedOnesAreCounted) {
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  Function f = function({x, y}, {dot22(x, y)});
  const std::int64_t node_id = f.graph().toposort().front()->id();
  const Tensor vx = testing::random_tensor(DType::Float32, {4, 6}, 1);
  const Tensor vy = testing::random_tensor(DType::Float32, {6, 3}, 2);
  (void)f({transposed_layout(vx), transposed_layout(vy)});
  EXPECT_EQ(blas_copy_stats_for_node(node_id).copies, 0);
  const BlasCopyStats before = blas_copy_stats();
  (void)f({testing::non_contiguous_copy(vx), vy});
  EXPECT_EQ(blas_copy_stats_for_node(node_id).copies, 1);
  EXPECT_EQ(blas_copy_stats_for_node(node_id).bytes, 4 * 6 * 4);
  EXPECT_EQ(blas_copy_stats().copies, before.copies + 1);
}

TEST(BlasOps, ZeroInnerDimensionGivesBetaTimesZ) {
  Variable z = matrix(DType::Float64, "z");
  Variable x = matrix(DType::Float64, "x");
  Variable y = matrix(DType::Float64, "y");
  const Tensor vz = testing::random_tensor(DType::Float64, {2, 3}, 3);
  const auto out = testing::run_graph({z, x, y}, {gemm(z, x, y, 1.0, 2.0)},
                                      {vz, Tensor::zeros(DType::Float64, {2, 0}),
                                       Tensor::zeros(DType::Float64, {0, 3})});
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(out[0].at(i), 2.0 * vz.at(i));
}

// Float32 entries too small to thread each (attention over 49-token windows) are divided between
// the threads, whole entries each (here 40 of 0.15 Mflop): the result is the serial one bit for
// bit, and the reference's.
TEST(BatchedDot, SmallEntriesSplitBetweenThreadsGiveTheSerialResult) {
  Variable x = tensor3(DType::Float32, "x");
  Variable y = tensor3(DType::Float32, "y");
  // y read through a transposing view, as k^T is in attention scores.
  const Variable product = batched_dot(x, dimshuffle(y, {0, 2, 1}));
  const std::vector<Tensor> values{testing::random_tensor(DType::Float32, {40, 49, 32}, 51),
                                   testing::random_tensor(DType::Float32, {40, 47, 32}, 52)};
  std::vector<Tensor> serial;
  {
    const threads::ScopedThreadCount one_thread(1);
    serial = testing::run_graph({x, y}, {product}, values);
  }
  const threads::ScopedThreadCount three_threads(3);
  EXPECT_TRUE(
      testing::all_close(testing::run_graph({x, y}, {product}, values)[0], serial[0], 0.0, 0.0));
  EXPECT_TRUE(testing::fast_matches_reference({x, y}, {product}, values, 1e-5, 1e-6));
}

}  // namespace
}  // namespace tscope
