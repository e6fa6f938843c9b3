// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"
#include "tscope/graph/traversal.h"

namespace tscope {
namespace {

TEST(Graph, OutputHandleKeepsItsApplyAlive) {
  Variable out;
  {
    Variable x = vector(DType::Float32, "x");
    out = exp(x + 1.0);
  }
  ASSERT_NE(out.owner(), nullptr);
  EXPECT_EQ(out.owner()->to_string(), "Elemwise{exp,no_inplace}(Elemwise{add,no_inplace}.0)");
  EXPECT_EQ(out.owner()->input(0).owner()->input(0).name(), "x");
}

TEST(Graph, ApplyRecordsCreationSiteAndUserOp) {
  Variable x = vector(DType::Float32, "x");
  Variable y = x * 2.0;
  const Provenance& provenance = y.owner()->provenance();
  EXPECT_EQ(provenance.user_op, "Mul");
  EXPECT_NE(provenance.site.file.find("graph_test.cpp"), std::string::npos);
  EXPECT_EQ(provenance.site.line, 21u);
}

TEST(Graph, CompositeBuilderNodesReportTheComposite) {
  Variable x = vector(DType::Float32, "x");
  Variable y = relu(x);
  EXPECT_EQ(y.owner()->provenance().user_op, "relu");
  EXPECT_EQ(y.owner()->input(1).node()->provenance.user_op, "constant");
}

TEST(Graph, TopologicalOrderIsDeterministicAndComplete) {
  Variable a = scalar(DType::Float64, "a");
  Variable b = a + 1.0;
  Variable c = b * b;
  Variable d = c - b;
  FunctionGraph graph = FunctionGraph::clone_of({a}, {d});
  const auto order = graph.toposort();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0]->op().name, "Add");
  EXPECT_EQ(order[1]->op().name, "Mul");
  EXPECT_EQ(order[2]->op().name, "Sub");
}

TEST(Graph, DeepChainDoesNotOverflowTheStack) {
  Variable x = scalar(DType::Float64, "x");
  Variable y = x;
  for (int i = 0; i < 20000; ++i) y = y + 1.0;
  Function f = function({x}, {y});
  EXPECT_EQ(f({Tensor::scalar(0.0)})[0].at(0), 20000.0);
}

TEST(Graph, ViewsOfConstantsAreConstantData) {
  // What a kernel may transform once and keep: constants, and views whose inputs all are.
  Variable weights = constant(Tensor::zeros(DType::Float32, {1, 4, 3}), "weights");
  Variable slice = subtensor(weights, {0});
  EXPECT_TRUE(views_constant_data(weights));
  EXPECT_TRUE(views_constant_data(slice));
  EXPECT_TRUE(views_constant_data(dimshuffle(slice, {1, 0})));
  EXPECT_TRUE(views_constant_data(reshape(slice, {12})));
  // A computed value, a graph input, a shared value and views of them may change between calls.
  EXPECT_FALSE(views_constant_data(slice * 2.0));
  EXPECT_FALSE(views_constant_data(subtensor(tensor3(DType::Float32, "x"), {0})));
  Variable shared_weights = shared(Tensor::zeros(DType::Float32, {1, 4, 3}), "shared_weights");
  EXPECT_FALSE(views_constant_data(subtensor(shared_weights, {0})));
  // A view whose shape comes from a graph input is not constant either.
  Variable length = scalar(DType::Int64, "length");
  EXPECT_FALSE(views_constant_data(reshape(slice, stack({length}))));
}

TEST(Graph, ArityIsChecked) {
  Variable x = vector(DType::Float32, "x");
  EXPECT_THROW((void)apply_op1(op_def("Add"), {x}, {}, std::source_location::current()), Error);
}

TEST(Graph, UnknownOpNameIsAClearError) {
  try {
    (void)op_def("Frobnicate");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("Frobnicate"), std::string::npos);
  }
}

}  // namespace
}  // namespace tscope

namespace tscope {
namespace {

TEST(SharedVariables, DefaultTypeLeavesDimsUnknownSoValuesMayChangeShape) {
  Variable w = shared(Tensor::zeros(DType::Float32, {1, 3}), "w");
  EXPECT_EQ(w.type().dims, (Dims{kUnknownDim, kUnknownDim}));
  w.set_value(Tensor::zeros(DType::Float32, {4, 5}));
  EXPECT_EQ(w.get_value().shape(), (Dims{4, 5}));
}

TEST(SharedVariables, FixedShapeTypeBroadcastsAndRejectsOtherShapes) {
  Variable bias = shared_fixed_shape(Tensor::from_vector<float>({1, 3}, {1, 2, 3}), "bias");
  EXPECT_EQ(bias.type().dims, (Dims{1, 3}));
  EXPECT_TRUE(bias.type().is_broadcastable(0));
  Variable x = matrix(DType::Float32, "x");
  Function f = function({x}, {x + bias});
  const Tensor y = f({Tensor::zeros(DType::Float32, {2, 3})})[0];
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW(bias.set_value(Tensor::zeros(DType::Float32, {2, 3})), Error);
}

}  // namespace
}  // namespace tscope
