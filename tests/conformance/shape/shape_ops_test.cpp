// SPDX-License-Identifier: Apache-2.0
// Conformance of Reshape, Flatten, Shape, Shape_i, MakeVector, Alloc (zeros, ones, fill,
// zeros_like, ones_like), Join, Split and Stack: static shape inference, values, views, fast vs
// reference, gradients against finite differences, and errors at build time and at run time.
#include <ostream>

#include "support/test_util.h"

namespace tscope {
namespace {

using testing::fast_matches_reference;
using testing::gradient_matches_numeric;
using testing::random_tensor;
using testing::run_graph;

std::vector<double> iota_values(std::int64_t count) {
  std::vector<double> values;
  for (std::int64_t i = 0; i < count; ++i) values.push_back(static_cast<double>(i));
  return values;
}

template <class Fn>
void expect_error(ErrorKind kind, const std::vector<std::string>& fragments, Fn&& fn) {
  try {
    fn();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), kind) << error.what();
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
          << "missing '" << fragment << "' in: " << error.what();
    }
  }
}

struct ReshapeCase {
  std::string name;
  Dims input;
  std::vector<std::int64_t> target;
  Dims expected;
};
void PrintTo(const ReshapeCase& c, std::ostream* os) { *os << c.name; }

class ReshapeShapes : public ::testing::TestWithParam<ReshapeCase> {};

TEST_P(ReshapeShapes, StaticAndSymbolicTargetsAgree) {
  const ReshapeCase& c = GetParam();
  Variable x = tensor(DType::Float32, c.input, "x");
  Variable y = reshape(x, c.target);
  EXPECT_EQ(y.type().dims, c.expected);
  Variable target = vector(DType::Int64, "target", {static_cast<std::int64_t>(c.target.size())});
  Variable z = reshape(x, target);
  const Tensor value = Tensor::from_doubles(DType::Float32, c.input, iota_values(c.input.product()));
  const Tensor target_value = Tensor::from_vector<std::int64_t>(
      Dims{static_cast<std::int64_t>(c.target.size())}, c.target);
  for (const Tensor& input : {value, testing::non_contiguous_copy(value)}) {
    const auto out = run_graph({x, target}, {y, z}, {input, target_value});
    EXPECT_EQ(out[0].shape(), c.expected);
    EXPECT_EQ(out[1].shape(), c.expected);
    EXPECT_EQ(out[0].to_doubles(), iota_values(c.input.product()));
    EXPECT_EQ(out[1].to_doubles(), iota_values(c.input.product()));
  }
  if (c.input.product() > 0) {
    EXPECT_TRUE(gradient_matches_numeric([&](const auto& v) { return reshape(v[0], c.target); },
                                         {random_tensor(DType::Float64, c.input, 2)}));
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, ReshapeShapes,
                         ::testing::Values(ReshapeCase{"to_vector_2x3", {2, 3}, {-1}, {6}},
                                           ReshapeCase{"infer_middle_2x3x4", {2, 3, 4}, {4, -1, 2}, {4, 3, 2}},
                                           ReshapeCase{"to_scalar_1x1", {1, 1}, {}, {}},
                                           ReshapeCase{"zero_size_0x3", {0, 3}, {3, 0}, {3, 0}},
                                           ReshapeCase{"add_axes_6", {6}, {1, 2, 1, 3}, {1, 2, 1, 3}}),
                         [](const auto& info) { return info.param.name; });

TEST(Reshape, IsAViewOfAContiguousInputAndACopyOtherwise) {
  Variable x = matrix(DType::Float32, "x");
  const Tensor value = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run_graph({x}, {reshape(x, {3, 2})}, {value})[0].buffer(), value.buffer());
  const Tensor strided = testing::non_contiguous_copy(value);
  EXPECT_NE(run_graph({x}, {reshape(x, {3, 2})}, {strided})[0].buffer(), strided.buffer());
  EXPECT_EQ(op_def("Reshape").aliasing.views, (std::vector<std::pair<int, int>>{{0, 0}}));
  EXPECT_EQ(reshape(x, {3, 2}).owner()->op_string(), "Reshape{2}");
}

TEST(Reshape, ShapeOfAnotherVariableGivesStaticDimsWhereKnown) {
  Variable x = tensor(DType::Float64, {2, 6}, "x");
  Variable like = tensor(DType::Float64, {kUnknownDim, 4}, "like");
  Variable y = reshape(x, shape(like));
  EXPECT_EQ(y.type().dims, (Dims{kUnknownDim, 4}));
  Variable z = reshape(x, make_vector({shape_i(like, 1), constant(Tensor::scalar(-1, DType::Int64))}));
  EXPECT_EQ(z.type().dims, (Dims{4, 3}));
  const auto out = run_graph({x, like}, {y, z}, {random_tensor(DType::Float64, {2, 6}, 1),
                                                 random_tensor(DType::Float64, {3, 4}, 2)});
  EXPECT_EQ(out[0].shape(), (Dims{3, 4}));
  EXPECT_EQ(out[1].shape(), (Dims{4, 3}));
}

TEST(Reshape, Errors) {
  Variable x = tensor(DType::Float32, {2, 3}, "x");
  expect_error(ErrorKind::ShapeMismatch, {"(2, 3)", "(4, 2)", "shape_ops_test.cpp"},
               [&] { (void)reshape(x, {4, 2}); });
  expect_error(ErrorKind::InvalidArgument, {"-1"}, [&] { (void)reshape(x, {-1, -1}); });
  expect_error(ErrorKind::ShapeMismatch, {"(2, 3)"}, [&] { (void)reshape(x, {4, -1}); });
  // A target whose product overflows int64 (found by fuzzing the ONNX loader).
  expect_error(ErrorKind::ShapeMismatch, {"more elements than an int64 can count"},
               [&] { (void)reshape(x, {std::int64_t{1} << 62, 4, -1}); });
  Variable m = matrix(DType::Float32, "m");
  Variable bad = reshape(m, {5});
  expect_error(ErrorKind::ShapeMismatch, {"(2, 3)", "Reshape{1}", "shape_ops_test.cpp"},
               [&] { (void)run_graph({m}, {bad}, {Tensor::zeros(DType::Float32, {2, 3})}); });
  expect_error(ErrorKind::TypeMismatch, {"Reshape"},
               [&] { (void)reshape(x, vector(DType::Float32, "f", {2})); });
  expect_error(ErrorKind::InvalidArgument, {"statically known length"},
               [&] { (void)reshape(x, vector(DType::Int64, "n")); });
}

TEST(Flatten, CollapsesTrailingAxes) {
  Variable x = tensor(DType::Float64, {2, 3, 4}, "x");
  EXPECT_EQ(flatten(x).type().dims, (Dims{24}));
  EXPECT_EQ(flatten(x, 2).type().dims, (Dims{2, 12}));
  EXPECT_EQ(flatten(x, 3).type().dims, (Dims{2, 3, 4}));
  EXPECT_EQ(flatten(x, 2).owner()->op_string(), "Flatten{2}");
  EXPECT_EQ(flatten(tensor3(DType::Float32, "t"), 2).type().dims, (Dims{kUnknownDim, kUnknownDim}));
  const Tensor value = random_tensor(DType::Float64, {2, 3, 4}, 3);
  const auto out = run_graph({x}, {flatten(x, 2)}, {testing::non_contiguous_copy(value)});
  EXPECT_EQ(out[0].shape(), (Dims{2, 12}));
  EXPECT_EQ(out[0].to_doubles(), value.to_doubles());
  EXPECT_TRUE(gradient_matches_numeric([](const auto& v) { return flatten(v[0], 2); }, {value}));
  expect_error(ErrorKind::InvalidArgument, {"outdim"}, [&] { (void)flatten(x, 4); });
}

TEST(ShapeQueries, ShapeShapeIAndMakeVector) {
  Variable x = tensor3(DType::Float32, "x");
  Variable n = scalar(DType::Int32, "n");
  Variable f = scalar(DType::Float64, "f");
  EXPECT_EQ(shape(x).type(), (Type{DType::Int64, Dims{3}}));
  EXPECT_EQ(shape_i(x, -1).owner()->op_string(), "Shape_i{2}");
  Variable v = make_vector({n, f});
  EXPECT_EQ(v.type(), (Type{DType::Float64, Dims{2}}));
  const Tensor value = Tensor::zeros(DType::Float32, {2, 0, 5});
  const auto out = run_graph({x, n, f}, {shape(x), shape_i(x, 2), v},
                             {value, Tensor::scalar(7, DType::Int32), Tensor::scalar(0.5)});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{2, 0, 5}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{5}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{7, 0.5}));
  EXPECT_TRUE(op_def("Shape").traits.zero_gradient);
  EXPECT_TRUE(gradient_matches_numeric(
      [](const auto& v) { return make_vector({v[0], v[1] * v[0]}); },
      {Tensor::scalar(1.5), Tensor::scalar(-2.0)}));
  expect_error(ErrorKind::TypeMismatch, {"not a scalar"}, [&] { (void)make_vector({n, x}); });
  expect_error(ErrorKind::IndexOutOfRange, {"Shape_i"}, [&] { (void)shape_i(x, 3); });
}

TEST(Alloc, BuildersAndStaticDims) {
  Variable x = matrix(DType::Float32, "x", {kUnknownDim, 3});
  Variable n = scalar(DType::Int64, "n");
  Variable z = zeros({n, 3}, DType::Float32);
  EXPECT_EQ(z.type(), (Type{DType::Float32, Dims{kUnknownDim, 3}}));
  EXPECT_EQ(z.owner()->provenance().user_op, "zeros");
  Variable o = ones({2, 2}, DType::Int32);
  EXPECT_EQ(o.type().dims, (Dims{2, 2}));
  Variable zl = zeros_like(x);
  EXPECT_EQ(zl.type().dims, (Dims{kUnknownDim, 3}));
  Variable row = vector(DType::Float32, "row", {3});
  Variable filled = fill(x, row);
  const Tensor xv = random_tensor(DType::Float32, {4, 3}, 1);
  const Tensor rv = Tensor::from_vector<float>({3}, {1, 2, 3});
  for (bool reference : {false, true}) {
    const auto out = run_graph({x, n, row}, {z, o, zl, ones_like(x), filled},
                               {xv, Tensor::scalar(2, DType::Int64), rv}, reference);
    EXPECT_EQ(out[0].to_doubles(), std::vector<double>(6, 0.0));
    EXPECT_EQ(out[1].dtype(), DType::Int32);
    EXPECT_EQ(out[1].to_doubles(), std::vector<double>(4, 1.0));
    EXPECT_EQ(out[2].shape(), (Dims{4, 3}));
    EXPECT_EQ(out[3].to_doubles(), std::vector<double>(12, 1.0));
    EXPECT_EQ(out[4].to_doubles(), (std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  }
  // Gradient of the broadcast value: summed over the broadcast axes.
  EXPECT_TRUE(gradient_matches_numeric(
      [](const auto& v) { return alloc(v[0], {2, 3, 4}); },
      {random_tensor(DType::Float64, {3, 1}, 4)}));
  EXPECT_TRUE(gradient_matches_numeric([](const auto& v) { return alloc(v[0], {3}); },
                                       {Tensor::scalar(0.7)}));
}

// The fast kernel fills a scalar broadcast, copies a value with a dense last axis a row at a
// time, and walks any other value element by element: each as the reference does.
TEST(Alloc, FastMatchesReferenceForEveryValueLayout) {
  Variable scalar_value = scalar(DType::Float32, "s");
  Variable row = vector(DType::Float32, "row", {4});
  Variable column = tensor(DType::Float32, {3, 1}, "column");
  Variable square = tensor(DType::Float64, {3, 4}, "square");
  const std::vector<Variable> outputs{alloc(scalar_value, {2, 3}),      alloc(row, {2, 3, 4}),
                                      alloc(column, {2, 3, 4}),         alloc(square, {2, 3, 4}),
                                      alloc(transpose(square), {4, 3}), alloc(row, {4}),
                                      alloc(scalar_value, {})};
  const Tensor square_value = random_tensor(DType::Float64, {3, 4}, 7);
  for (const Tensor& square_layout : {square_value, testing::non_contiguous_copy(square_value)}) {
    EXPECT_TRUE(fast_matches_reference(
        {scalar_value, row, column, square}, outputs,
        {Tensor::scalar(1.5, DType::Float32), random_tensor(DType::Float32, {4}, 5),
         random_tensor(DType::Float32, {3, 1}, 6), square_layout}));
  }
}

TEST(Alloc, Errors) {
  Variable row = vector(DType::Float32, "row", {3});
  expect_error(ErrorKind::ShapeMismatch, {"(3,)", "(2, 4)", "shape_ops_test.cpp"},
               [&] { (void)alloc(row, {2, 4}); });
  expect_error(ErrorKind::InvalidArgument, {"negative"}, [&] { (void)alloc(row, {-2, 3}); });
  expect_error(ErrorKind::TypeMismatch, {"more axes"}, [&] { (void)alloc(row, {}); });
  // A value whose extent is unknown statically must match at run time: it does not broadcast.
  Variable free = vector(DType::Float32, "free");
  Variable n = scalar(DType::Int64, "n");
  Variable out = alloc(free, {2, n});
  expect_error(ErrorKind::ShapeMismatch, {"(1,)", "(2, 3)", "Alloc", "shape_ops_test.cpp"}, [&] {
    (void)run_graph({free, n}, {out}, {Tensor::zeros(DType::Float32, {1}), Tensor::scalar(3, DType::Int64)});
  });
  expect_error(ErrorKind::InvalidArgument, {"negative"}, [&] {
    (void)run_graph({free, n}, {out}, {Tensor::zeros(DType::Float32, {3}), Tensor::scalar(-3, DType::Int64)});
  });
}

TEST(JoinSplit, StaticShapesValuesAndGradients) {
  Variable a = tensor(DType::Float64, {2, 3}, "a");
  Variable b = tensor(DType::Float64, {4, 3}, "b");
  Variable joined = join(0, {a, b});
  EXPECT_EQ(joined.type().dims, (Dims{6, 3}));
  EXPECT_EQ(joined.owner()->op_string(), "Join{0}");
  Variable c = matrix(DType::Float32, "c");
  EXPECT_EQ(join(-1, {a, c}).type(), (Type{DType::Float64, Dims{2, kUnknownDim}}));
  const std::vector<Variable> parts = split(joined, 0, {1, 5});
  ASSERT_EQ(parts.size(), 2U);
  EXPECT_EQ(parts[1].type().dims, (Dims{5, 3}));
  const Tensor av = Tensor::from_doubles(DType::Float64, {2, 3}, iota_values(6));
  const Tensor bv = random_tensor(DType::Float64, {4, 3}, 1);
  const auto out = run_graph({a, b}, {joined, parts[0], parts[1], join(1, {a, a})}, {av, bv});
  EXPECT_EQ(out[0].shape(), (Dims{6, 3}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(out[3].to_doubles(), (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_TRUE(fast_matches_reference({a, b}, {join(1, {transpose(b), transpose(b)}), joined},
                                     {testing::non_contiguous_copy(av), testing::non_contiguous_copy(bv)}));
  EXPECT_TRUE(gradient_matches_numeric([](const auto& v) { return join(0, {v[0], v[1], v[0]}); },
                                       {av, bv}));
  EXPECT_TRUE(gradient_matches_numeric(
      [](const auto& v) { return split(v[0], 1, {1, 0, 2})[2]; }, {av}));
  EXPECT_TRUE(gradient_matches_numeric(
      [](const auto& v) { return split(v[0], 1, make_vector({shape_i(v[0], 0), shape_i(v[0], 0)}))[0]; },
      {Tensor::from_doubles(DType::Float64, {2, 4}, iota_values(8))}));
}

TEST(JoinSplit, MixedDtypesPromoteAndZeroSizeWorks) {
  Variable i = matrix(DType::Int32, "i");
  Variable f = matrix(DType::Float32, "f");
  Variable joined = join(0, {i, f});
  EXPECT_EQ(joined.dtype(), DType::Float32);
  const auto out = run_graph({i, f}, {joined},
                             {Tensor::zeros(DType::Int32, {0, 2}), Tensor::full(DType::Float32, {1, 2}, 2.5)});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{2.5, 2.5}));
}

TEST(JoinSplit, Errors) {
  Variable a = tensor(DType::Float32, {2, 3}, "a");
  Variable b = tensor(DType::Float32, {2, 4}, "b");
  expect_error(ErrorKind::ShapeMismatch, {"(2, 3)", "(2, 4)", "Join", "shape_ops_test.cpp"},
               [&] { (void)join(0, {a, b}); });
  expect_error(ErrorKind::ShapeMismatch, {"ranks"}, [&] { (void)join(0, {a, vector(DType::Float32)}); });
  expect_error(ErrorKind::IndexOutOfRange, {}, [&] { (void)join(2, {a, a}); });
  expect_error(ErrorKind::ShapeMismatch, {"add up to 4"}, [&] { (void)split(a, 1, {2, 2}); });
  Variable m = matrix(DType::Float32, "m");
  Variable n = matrix(DType::Float32, "n");
  Variable joined = join(0, {m, n});
  expect_error(ErrorKind::ShapeMismatch, {"(1, 2)", "(1, 3)", "Join{0}"}, [&] {
    (void)run_graph({m, n}, {joined}, {Tensor::zeros(DType::Float32, {1, 2}), Tensor::zeros(DType::Float32, {1, 3})});
  });
  Variable pieces = split(m, 0, {1, 1})[0];
  expect_error(ErrorKind::ShapeMismatch, {"add up to 2", "(3, 2)", "Split{0}"}, [&] {
    (void)run_graph({m}, {pieces}, {Tensor::zeros(DType::Float32, {3, 2})});
  });
}

TEST(Stack, NewAxisAnywhere) {
  Variable a = tensor(DType::Float64, {2, 3}, "a");
  Variable b = tensor(DType::Float64, {2, 3}, "b");
  EXPECT_EQ(stack({a, b}).type().dims, (Dims{2, 2, 3}));
  EXPECT_EQ(stack({a, b}, 1).type().dims, (Dims{2, 2, 3}));
  EXPECT_EQ(stack({a, b, a}, -1).type().dims, (Dims{2, 3, 3}));
  EXPECT_EQ(stack({a, b}, -1).owner()->provenance().user_op, "stack");
  const Tensor av = Tensor::from_doubles(DType::Float64, {2, 3}, iota_values(6));
  const Tensor bv = Tensor::full(DType::Float64, {2, 3}, -1.0);
  const auto out = run_graph({a, b}, {stack({a, b}, -1)}, {av, bv});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1}));
  EXPECT_TRUE(gradient_matches_numeric([](const auto& v) { return stack({v[0], v[1]}, 1); }, {av, bv}));
}

}  // namespace
}  // namespace tscope
