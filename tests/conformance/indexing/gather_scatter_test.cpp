// SPDX-License-Identifier: Apache-2.0
// gather_elements, scatter_elements and gather_nd against loops written from the ONNX definitions.
#include "support/test_util.h"

namespace tscope {
namespace {

Tensor int64_tensor(const Dims& dims, std::vector<std::int64_t> values) {
  return Tensor::from_vector<std::int64_t>(dims, values);
}

/// Row-major coordinates of flat index `flat` in `dims`.
std::vector<std::int64_t> unravel(std::int64_t flat, const Dims& dims) {
  std::vector<std::int64_t> coords(static_cast<std::size_t>(dims.rank()));
  for (int axis = dims.rank() - 1; axis >= 0; --axis) {
    coords[static_cast<std::size_t>(axis)] = flat % dims[axis];
    flat /= dims[axis];
  }
  return coords;
}

std::int64_t ravel(const std::vector<std::int64_t>& coords, const Dims& dims) {
  std::int64_t flat = 0;
  for (int axis = 0; axis < dims.rank(); ++axis)
    flat = flat * dims[axis] + coords[static_cast<std::size_t>(axis)];
  return flat;
}

std::int64_t wrap(std::int64_t index, std::int64_t extent) {
  return index < 0 ? index + extent : index;
}

/// out[p] = x[p with p[axis] replaced by indices[p]].
std::vector<double> gather_elements_loops(const Tensor& x, const Tensor& indices, int axis) {
  const std::vector<double> data = x.to_doubles();
  const std::vector<double> idx = indices.to_doubles();
  std::vector<double> out;
  for (std::int64_t flat = 0; flat < indices.numel(); ++flat) {
    std::vector<std::int64_t> coords = unravel(flat, indices.shape());
    coords[static_cast<std::size_t>(axis)] =
        wrap(static_cast<std::int64_t>(idx[static_cast<std::size_t>(flat)]), x.shape()[axis]);
    out.push_back(data[static_cast<std::size_t>(ravel(coords, x.shape()))]);
  }
  return out;
}

std::vector<double> scatter_elements_loops(
    const Tensor& x, const Tensor& indices, const Tensor& updates, int axis, bool add) {
  std::vector<double> out = x.to_doubles();
  const std::vector<double> idx = indices.to_doubles();
  const std::vector<double> values = updates.to_doubles();
  for (std::int64_t flat = 0; flat < indices.numel(); ++flat) {
    std::vector<std::int64_t> coords = unravel(flat, indices.shape());
    coords[static_cast<std::size_t>(axis)] =
        wrap(static_cast<std::int64_t>(idx[static_cast<std::size_t>(flat)]), x.shape()[axis]);
    double& target = out[static_cast<std::size_t>(ravel(coords, x.shape()))];
    target = add ? target + values[static_cast<std::size_t>(flat)]
                 : values[static_cast<std::size_t>(flat)];
  }
  return out;
}

TEST(GatherElements, MatchesLoopsOnEveryAxisWithNegativeIndices) {
  const Tensor x_value = testing::random_tensor(DType::Float32, {3, 4, 2}, 31);
  for (int axis = 0; axis < 3; ++axis) {
    Dims index_dims{2, 3, 2};
    const std::int64_t extent = x_value.shape()[axis];
    std::vector<std::int64_t> values;
    for (std::int64_t i = 0; i < index_dims.product(); ++i)
      values.push_back((i * 5 + 1) % (2 * extent) - extent);
    const Tensor idx_value = int64_tensor(index_dims, values);
    Variable x = tensor(DType::Float32, {3, 4, 2}, "x");
    Variable idx = tensor(DType::Int64, index_dims, "idx");
    Variable y = gather_elements(x, idx, axis - 3);  // negative axis
    EXPECT_EQ(y.type().dims, index_dims);
    const Tensor out = testing::run_graph({x, idx}, {y}, {x_value, idx_value})[0];
    EXPECT_EQ(out.shape(), index_dims);
    EXPECT_EQ(out.to_doubles(), gather_elements_loops(x_value, idx_value, axis)) << "axis " << axis;
  }
}

TEST(GatherElements, GradientIsAScatterAdd) {
  // Repeated indices: their gradients must accumulate.
  const std::vector<Tensor> point{testing::random_tensor(DType::Float64, {3, 4}, 32),
                                  int64_tensor({2, 4}, {0, 2, 2, -1, 1, 1, 0, 2})};
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return gather_elements(v[0], v[1], 0); }, point));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return gather_elements(v[0], v[1], 1); },
      {point[0], int64_tensor({3, 2}, {3, 3, 0, -4, 1, 2})}));
}

TEST(GatherElements, ErrorsNameTheProblem) {
  Variable x = matrix(DType::Float32, "x", {3, 4});
  EXPECT_THROW((void)gather_elements(x, vector(DType::Int64, "i", {3}), 0), Error);
  EXPECT_THROW((void)gather_elements(x, matrix(DType::Float32, "f", {2, 2}), 0), Error);
  try {
    (void)gather_elements(x, matrix(DType::Int64, "i", {2, 5}), 0);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
  }
  try {
    (void)gather_elements(x, matrix(DType::Int64, "i", {2, kUnknownDim}), 0);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  }
  Variable idx = matrix(DType::Int64, "idx", {2, 4});
  Variable y = gather_elements(x, idx, 0);
  try {
    (void)testing::run_graph(
        {x, idx}, {y},
        {Tensor::zeros(DType::Float32, {3, 4}), int64_tensor({2, 4}, {0, 1, 2, 3, 0, 0, 0, 0})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
    EXPECT_NE(std::string(error.what()).find("gather_scatter_test.cpp"), std::string::npos)
        << error.what();
  }
}

TEST(ScatterElements, WritesAndAddsLikeTheLoops) {
  const Tensor x_value = testing::random_tensor(DType::Float64, {3, 4}, 33);
  const Tensor idx_value = int64_tensor({2, 3}, {1, -1, 0, 2, 0, -3});
  const Tensor updates_value = testing::random_tensor(DType::Float64, {2, 3}, 34);
  for (int axis = 0; axis < 2; ++axis) {
    for (bool add : {false, true}) {
      Variable x = matrix(DType::Float64, "x", {3, 4});
      Variable idx = matrix(DType::Int64, "idx", {2, 3});
      Variable updates = matrix(DType::Float64, "u", {2, 3});
      Variable y = scatter_elements(x, idx, updates, axis,
                                    add ? ScatterReduction::Add : ScatterReduction::None);
      const Tensor wrapped = axis == 0 ? int64_tensor({2, 3}, {1, -1, 0, 2, 0, -2}) : idx_value;
      const Tensor out =
          testing::run_graph({x, idx, updates}, {y}, {x_value, wrapped, updates_value})[0];
      EXPECT_EQ(out.shape(), (Dims{3, 4}));
      EXPECT_TRUE(testing::all_close(
          out,
          Tensor::from_doubles(DType::Float64, {3, 4},
                               scatter_elements_loops(x_value, wrapped, updates_value, axis, add))))
          << "axis " << axis << " add " << add;
    }
  }
}

TEST(ScatterElements, AddAccumulatesDuplicates) {
  Variable x = matrix(DType::Float32, "x", {1, 5});
  Variable idx = matrix(DType::Int64, "idx", {1, 2});
  Variable updates = matrix(DType::Float32, "u", {1, 2});
  Variable y = scatter_elements(x, idx, updates, 1, ScatterReduction::Add);
  const Tensor out = testing::run_graph(
      {x, idx, updates}, {y},
      {Tensor::from_vector<float>({1, 5}, {1, 2, 3, 4, 5}), int64_tensor({1, 2}, {1, 1}),
       Tensor::from_vector<float>({1, 2}, {1.1f, 2.1f})})[0];
  EXPECT_TRUE(testing::all_close(out, Tensor::from_vector<float>({1, 5}, {1, 5.2f, 3, 4, 5})));
}

TEST(ScatterElements, GradientsOfBothReductions) {
  const std::vector<Tensor> point{testing::random_tensor(DType::Float64, {3, 3}, 35),
                                  int64_tensor({2, 3}, {1, 0, 2, 0, 2, -2}),
                                  testing::random_tensor(DType::Float64, {2, 3}, 36)};
  for (ScatterReduction reduction : {ScatterReduction::None, ScatterReduction::Add}) {
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [reduction](const auto& v) { return scatter_elements(v[0], v[1], v[2], 0, reduction); },
        point));
  }
}

/// GatherND from its definition: out[b..., i...] = x[b..., indices[b..., i..., :], ...].
std::vector<double> gather_nd_loops(const Tensor& x, const Tensor& indices, int batch) {
  const Dims& xd = x.shape();
  const Dims& id = indices.shape();
  const std::int64_t depth = id[id.rank() - 1];
  std::int64_t inner = 1;
  for (int axis = batch + static_cast<int>(depth); axis < xd.rank(); ++axis) inner *= xd[axis];
  const std::vector<double> data = x.to_doubles();
  const std::vector<double> idx = indices.to_doubles();
  Dims outer = id;
  outer.resize(outer.rank() - 1);
  std::vector<double> out;
  for (std::int64_t flat = 0; flat < outer.product(); ++flat) {
    const std::vector<std::int64_t> where = unravel(flat, outer);
    std::vector<std::int64_t> coords(where.begin(), where.begin() + batch);
    for (std::int64_t k = 0; k < depth; ++k) {
      const auto value = static_cast<std::int64_t>(idx[static_cast<std::size_t>(flat * depth + k)]);
      coords.push_back(wrap(value, xd[batch + static_cast<int>(k)]));
    }
    while (static_cast<int>(coords.size()) < xd.rank()) coords.push_back(0);
    const std::int64_t start = ravel(coords, xd);
    for (std::int64_t j = 0; j < inner; ++j)
      out.push_back(data[static_cast<std::size_t>(start + j)]);
  }
  return out;
}

TEST(GatherNd, MatchesLoopsWithAndWithoutBatchAxes) {
  const Tensor x_value = testing::random_tensor(DType::Float32, {2, 3, 4}, 37);
  struct Case {
    Dims index_dims;
    std::vector<std::int64_t> values;
    int batch;
    Dims expected_dims;
  };
  const std::vector<Case> cases{
      {{2, 2}, {1, 2, 0, -1}, 0, {2, 4}},
      {{3, 1}, {1, 0, -1}, 0, {3, 3, 4}},
      {{2, 2, 3}, {0, 0, 0, 1, 2, 3, 1, -1, -4, 0, 1, 1}, 0, {2, 2}},
      {{3}, {1, -2, 2}, 0, {}},
      {{2, 1}, {2, 0}, 1, {2, 4}},
      {{2, 3, 2}, {0, 1, 2, 3, -1, -1, 1, 0, 0, 0, 2, -3}, 1, {2, 3}},
      {{2, 3, 1}, {0, 1, 2, 3, -1, -4}, 2, {2, 3}},
  };
  for (const Case& test : cases) {
    Variable x = tensor(DType::Float32, {2, 3, 4}, "x");
    Variable idx = tensor(DType::Int64, test.index_dims, "idx");
    Variable y = gather_nd(x, idx, test.batch);
    EXPECT_EQ(y.type().dims, test.expected_dims) << test.index_dims.to_string();
    const Tensor idx_value = int64_tensor(test.index_dims, test.values);
    const Tensor out = testing::run_graph({x, idx}, {y}, {x_value, idx_value})[0];
    EXPECT_EQ(out.shape(), test.expected_dims);
    EXPECT_EQ(out.to_doubles(), gather_nd_loops(x_value, idx_value, test.batch))
        << test.index_dims.to_string() << " batch " << test.batch;
  }
}

TEST(GatherNd, GradientAndErrors) {
  EXPECT_TRUE(
      testing::gradient_matches_numeric([](const auto& v) { return gather_nd(v[0], v[1], 1); },
                                        {testing::random_tensor(DType::Float64, {2, 3, 2}, 38),
                                         int64_tensor({2, 3, 1}, {0, 2, 2, 1, 1, -1})}));
  Variable x = tensor(DType::Float32, {2, 3, 4}, "x");
  EXPECT_THROW((void)gather_nd(x, matrix(DType::Int64, "i", {2, 4}), 0), Error);  // 4 coordinates
  EXPECT_THROW((void)gather_nd(x, matrix(DType::Int64, "i", {3, 1}), 1), Error);  // batch 3 vs 2
  EXPECT_THROW((void)gather_nd(x, matrix(DType::Int64, "i", {2, 1}), 2), Error);  // batch_dims
  EXPECT_THROW((void)gather_nd(x, matrix(DType::Float32, "f", {2, 1}), 0), Error);
  Variable idx = matrix(DType::Int64, "idx", {1, 2});
  Variable y = gather_nd(x, idx, 0);
  try {
    (void)testing::run_graph(
        {x, idx}, {y}, {Tensor::zeros(DType::Float32, {2, 3, 4}), int64_tensor({1, 2}, {1, 3})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
  }
}

/// ScatterND from its definition: x[indices[i..., :], ...] = (or +=) updates[i..., ...].
std::vector<double> scatter_nd_loops(const Tensor& x,
                                     const Tensor& indices,
                                     const Tensor& updates,
                                     bool add) {
  const Dims& xd = x.shape();
  const Dims& id = indices.shape();
  const std::int64_t depth = id[id.rank() - 1];
  std::int64_t inner = 1;
  for (int axis = static_cast<int>(depth); axis < xd.rank(); ++axis) inner *= xd[axis];
  std::vector<double> out = x.to_doubles();
  const std::vector<double> idx = indices.to_doubles();
  const std::vector<double> values = updates.to_doubles();
  for (std::int64_t flat = 0; flat < indices.numel() / depth; ++flat) {
    std::vector<std::int64_t> coords;
    for (std::int64_t k = 0; k < depth; ++k) {
      const auto value = static_cast<std::int64_t>(idx[static_cast<std::size_t>(flat * depth + k)]);
      coords.push_back(wrap(value, xd[static_cast<int>(k)]));
    }
    while (static_cast<int>(coords.size()) < xd.rank()) coords.push_back(0);
    const std::int64_t start = ravel(coords, xd);
    for (std::int64_t j = 0; j < inner; ++j) {
      double& target = out[static_cast<std::size_t>(start + j)];
      const double value = values[static_cast<std::size_t>(flat * inner + j)];
      target = add ? target + value : value;
    }
  }
  return out;
}

TEST(ScatterNd, WritesAndAddsLikeTheLoops) {
  const Tensor x_value = testing::random_tensor(DType::Float64, {3, 4, 2}, 39);
  struct Case {
    Dims index_dims;
    std::vector<std::int64_t> values;
    Dims update_dims;
  };
  const std::vector<Case> cases{
      {{2, 1}, {2, -3}, {2, 4, 2}},
      {{3, 2}, {0, 1, 2, -1, 1, 0}, {3, 2}},
      {{2, 2, 3}, {0, 0, 0, 1, 2, 1, 2, 3, -1, -3, -4, 1}, {2, 2}},
  };
  for (const Case& test : cases) {
    for (bool add : {false, true}) {
      Variable x = tensor(DType::Float64, {3, 4, 2}, "x");
      Variable idx = tensor(DType::Int64, test.index_dims, "idx");
      Variable updates = tensor(DType::Float64, test.update_dims, "u");
      Variable y =
          scatter_nd(x, idx, updates, add ? ScatterReduction::Add : ScatterReduction::None);
      const Tensor idx_value = int64_tensor(test.index_dims, test.values);
      const Tensor updates_value = testing::random_tensor(DType::Float64, test.update_dims, 40);
      const Tensor out =
          testing::run_graph({x, idx, updates}, {y}, {x_value, idx_value, updates_value})[0];
      EXPECT_TRUE(testing::all_close(
          out, Tensor::from_doubles(DType::Float64, {3, 4, 2},
                                    scatter_nd_loops(x_value, idx_value, updates_value, add))))
          << test.index_dims.to_string() << " add " << add;
    }
  }
}

TEST(ScatterNd, GradientsAndErrors) {
  const std::vector<Tensor> point{testing::random_tensor(DType::Float64, {3, 2}, 41),
                                  int64_tensor({2, 1}, {2, 0}),
                                  testing::random_tensor(DType::Float64, {2, 2}, 42)};
  for (ScatterReduction reduction : {ScatterReduction::None, ScatterReduction::Add}) {
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [reduction](const auto& v) { return scatter_nd(v[0], v[1], v[2], reduction); }, point));
  }
  Variable x = matrix(DType::Float32, "x", {3, 2});
  EXPECT_THROW(
      (void)scatter_nd(x, matrix(DType::Int64, "i", {2, 3}), vector(DType::Float32, "u", {2})),
      Error);  // 3 coordinates for rank 2
  EXPECT_THROW(
      (void)scatter_nd(x, matrix(DType::Int64, "i", {2, 1}), vector(DType::Float32, "u", {3})),
      Error);  // updates of the wrong shape
}

}  // namespace
}  // namespace tscope
