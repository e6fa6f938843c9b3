// SPDX-License-Identifier: Apache-2.0
// GatherElements, ScatterElements and GatherND imported from ONNX, against the values of the ONNX
// operator documentation's examples (worked by hand), and Slice with the int64 sentinels
// exporters write for open ends.
#include <onnx/onnx_pb.h>

#include <limits>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::DimSpec;
using testing::ModelBuilder;
using testing::add_string_attribute;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kInt64 = ::onnx::TensorProto::INT64;

std::vector<Tensor> run(const ModelBuilder& model, const std::vector<Tensor>& inputs) {
  const ImportedModel imported = import_model_bytes(model.bytes(), "indexing.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  return f(inputs);
}

Tensor floats(const Dims& dims, std::vector<float> values) {
  return Tensor::from_vector<float>(dims, values);
}
Tensor int64s(const Dims& dims, std::vector<std::int64_t> values) {
  return Tensor::from_vector<std::int64_t>(dims, values);
}

ModelBuilder gather_elements_model(const std::vector<DimSpec>& data,
                                   const std::vector<DimSpec>& indices,
                                   std::int64_t axis) {
  ModelBuilder model;
  model.input("data", kFloat, data).input("indices", kInt64, indices).output("y", kFloat, indices);
  testing::add_int_attribute(model.node("GatherElements", {"data", "indices"}, {"y"}, "gather_el"),
                             "axis", axis);
  return model;
}

TEST(OnnxIndexing, GatherElementsOnBothAxesWithNegativeIndices) {
  EXPECT_EQ(run(gather_elements_model({2, 2}, {2, 2}, 1),
                {floats({2, 2}, {1, 2, 3, 4}), int64s({2, 2}, {0, 0, 1, 0})})[0]
                .to_doubles(),
            (std::vector<double>{1, 1, 4, 3}));
  const Tensor data = floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(
      run(gather_elements_model({3, 3}, {2, 3}, 0), {data, int64s({2, 3}, {1, 2, 0, 2, 0, 0})})[0]
          .to_doubles(),
      (std::vector<double>{4, 8, 3, 7, 2, 3}));
  EXPECT_EQ(run(gather_elements_model({3, 3}, {2, 3}, -2),
                {data, int64s({2, 3}, {-1, -2, 0, -2, 0, 0})})[0]
                .to_doubles(),
            (std::vector<double>{7, 5, 3, 4, 2, 3}));
}

// x[:, 3:] is Slice(starts=[3], ends=[INT64_MAX], axes=[1]); x[:, ::-1] runs from -1 to
// INT64_MIN with step -1. Both sentinels are beyond what a double holds exactly.
TEST(OnnxIndexing, SliceToTheInt64SentinelsReachesTheEnds) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  auto slice_model = [](std::int64_t start, std::int64_t end, std::int64_t step,
                        std::int64_t out) {
    ModelBuilder model;
    model.input("x", kFloat, {2, 5}).output("y", kFloat, {2, out});
    model.int64_initializer("starts", {start}).int64_initializer("ends", {end});
    model.int64_initializer("axes", {1}).int64_initializer("steps", {step});
    model.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    return model;
  };
  const Tensor x = floats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(run(slice_model(3, kMax, 1, 2), {x})[0].to_doubles(),
            (std::vector<double>{3, 4, 8, 9}));
  EXPECT_EQ(run(slice_model(-1, kMin, -1, 5), {x})[0].to_doubles(),
            (std::vector<double>{4, 3, 2, 1, 0, 9, 8, 7, 6, 5}));
}

TEST(OnnxIndexing, HugeDeclaredIndexExtentsAreRefusedNotAllocated) {
  // The paired axes get constant aranges as long as the declared index extents.
  try {
    (void)import_model_bytes(
        gather_elements_model({std::int64_t{1} << 40, 2}, {std::int64_t{1} << 40, 2}, 1).bytes(),
        "huge.onnx");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(error.what()).find("gather_el"), std::string::npos) << error.what();
  }
}

TEST(OnnxIndexing, OutOfRangeIndexNamesTheModelNode) {
  try {
    (void)run(gather_elements_model({2, 2}, {2, 2}, 1),
              {floats({2, 2}, {1, 2, 3, 4}), int64s({2, 2}, {0, 2, 1, 0})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
    const std::string what = error.what();
    EXPECT_NE(what.find("gather_el"), std::string::npos) << what;
    EXPECT_NE(what.find("index 2"), std::string::npos) << what;
  }
}

ModelBuilder scatter_model(const std::vector<DimSpec>& data,
                           const std::vector<DimSpec>& indices,
                           std::int64_t axis,
                           const std::string& reduction,
                           std::int64_t opset = 13) {
  ModelBuilder model(opset);
  model.input("data", kFloat, data)
      .input("indices", kInt64, indices)
      .input("updates", kFloat, indices);
  model.output("y", kFloat, data);
  auto& node = model.node("ScatterElements", {"data", "indices", "updates"}, {"y"}, "scatter");
  testing::add_int_attribute(node, "axis", axis);
  if (!reduction.empty()) add_string_attribute(node, "reduction", reduction);
  return model;
}

TEST(OnnxIndexing, ScatterElementsWritesAndAdds) {
  const std::vector<Tensor> along_rows{Tensor::zeros(DType::Float32, {3, 3}),
                                       int64s({2, 3}, {1, 0, 2, 0, 2, 1}),
                                       floats({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})};
  EXPECT_TRUE(tscope::testing::all_close(
      run(scatter_model({3, 3}, {2, 3}, 0, ""), along_rows)[0],
      floats({3, 3}, {2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f})));
  const Tensor row = floats({1, 5}, {1, 2, 3, 4, 5});
  EXPECT_TRUE(tscope::testing::all_close(
      run(scatter_model({1, 5}, {1, 2}, 1, ""),
          {row, int64s({1, 2}, {1, -2}), floats({1, 2}, {1.1f, 2.1f})})[0],
      floats({1, 5}, {1, 1.1f, 3, 2.1f, 5})));
  EXPECT_TRUE(tscope::testing::all_close(
      run(scatter_model({1, 5}, {1, 2}, 1, "add", 16),
          {row, int64s({1, 2}, {1, 1}), floats({1, 2}, {1.1f, 2.1f})})[0],
      floats({1, 5}, {1, 5.2f, 3, 4, 5})));
  try {
    (void)import_model_bytes(scatter_model({1, 5}, {1, 2}, 1, "mul", 16).bytes(), "scatter.onnx");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(error.what()).find("mul"), std::string::npos) << error.what();
  }
}

ModelBuilder gather_nd_model(const std::vector<DimSpec>& data,
                             const std::vector<DimSpec>& indices,
                             const std::vector<DimSpec>& out,
                             std::int64_t batch_dims) {
  ModelBuilder model;
  model.input("data", kFloat, data).input("indices", kInt64, indices).output("y", kFloat, out);
  testing::add_int_attribute(model.node("GatherND", {"data", "indices"}, {"y"}, "gather_nd"),
                             "batch_dims", batch_dims);
  return model;
}

TEST(OnnxIndexing, GatherNdWithAndWithoutBatchAxes) {
  const Tensor square = floats({2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(run(gather_nd_model({2, 2}, {2, 2}, {2}, 0), {square, int64s({2, 2}, {0, 0, 1, 1})})[0]
                .to_doubles(),
            (std::vector<double>{0, 3}));
  const Tensor rows =
      run(gather_nd_model({2, 2}, {2, 1}, {2, 2}, 0), {square, int64s({2, 1}, {1, 0})})[0];
  EXPECT_EQ(rows.shape(), (Dims{2, 2}));
  EXPECT_EQ(rows.to_doubles(), (std::vector<double>{2, 3, 0, 1}));
  const Tensor cube = floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(
      run(gather_nd_model({2, 2, 2}, {2, 2}, {2, 2}, 0), {cube, int64s({2, 2}, {0, 1, 1, 0})})[0]
          .to_doubles(),
      (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(run(gather_nd_model({2, 2, 2}, {2, 1}, {2, 2}, 1), {cube, int64s({2, 1}, {1, 0})})[0]
                .to_doubles(),
            (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(run(gather_nd_model({2, 2, 2}, {2, 1}, {2, 2}, 1), {cube, int64s({2, 1}, {-1, -2})})[0]
                .to_doubles(),
            (std::vector<double>{2, 3, 4, 5}));
}

TEST(OnnxIndexing, ScatterNdWritesAndAdds) {
  const auto model = [](const std::string& reduction) {
    ModelBuilder built(16);
    built.input("data", kFloat, {8}).input("indices", kInt64, {4, 1}).input("updates", kFloat, {4});
    built.output("y", kFloat, {8});
    auto& node = built.node("ScatterND", {"data", "indices", "updates"}, {"y"}, "scatter_nd");
    if (!reduction.empty()) add_string_attribute(node, "reduction", reduction);
    return built;
  };
  const Tensor data = floats({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor updates = floats({4}, {9, 10, 11, 12});
  EXPECT_EQ(run(model(""), {data, int64s({4, 1}, {4, 3, 1, 7}), updates})[0].to_doubles(),
            (std::vector<double>{1, 11, 3, 10, 9, 6, 7, 12}));
  EXPECT_EQ(run(model("add"), {data, int64s({4, 1}, {0, 0, -1, 2}), updates})[0].to_doubles(),
            (std::vector<double>{20, 2, 15, 4, 5, 6, 7, 19}));
}

}  // namespace
}  // namespace tscope::onnx
