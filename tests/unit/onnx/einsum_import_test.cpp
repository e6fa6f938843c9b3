// SPDX-License-Identifier: Apache-2.0
// Einsum imported from ONNX against a brute-force reference: every assignment of values to the
// equation's letters, the product of the operands' elements summed into the output element.
#include <onnx/onnx_pb.h>

#include <map>

#include "gradient_check.h"
#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::DimSpec;
using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kDouble = ::onnx::TensorProto::DOUBLE;

struct Case {
  std::string equation;       ///< explicit, letters only (the reference's input)
  std::string onnx_equation;  ///< what the model holds (may use "..." or an implicit output)
  std::vector<Dims> shapes;
};

std::vector<std::string> split_terms(const std::string& equation, std::string* output) {
  const std::size_t arrow = equation.find("->");
  *output = equation.substr(arrow + 2);
  std::vector<std::string> terms;
  std::string term;
  for (char c : equation.substr(0, arrow)) {
    if (c == ',') {
      terms.push_back(term);
      term.clear();
    } else {
      term.push_back(c);
    }
  }
  terms.push_back(term);
  return terms;
}

Tensor brute_force_einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string output;
  const std::vector<std::string> terms = split_terms(equation, &output);
  std::map<char, std::int64_t> extent;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    for (std::size_t j = 0; j < terms[i].size(); ++j)
      extent[terms[i][j]] = operands[i].shape()[static_cast<int>(j)];
  }
  std::vector<char> letters;
  for (const auto& [letter, size] : extent) letters.push_back(letter);
  Dims out_dims;
  for (char c : output) out_dims.push_back(extent[c]);
  std::vector<double> out(static_cast<std::size_t>(out_dims.product()), 0.0);
  std::map<char, std::int64_t> value;
  for (char c : letters) value[c] = 0;
  auto flat_of = [&](const std::string& term, const Dims& dims) {
    std::int64_t flat = 0;
    for (std::size_t j = 0; j < term.size(); ++j)
      flat = flat * dims[static_cast<int>(j)] + value[term[j]];
    return flat;
  };
  for (;;) {
    double product = 1.0;
    for (std::size_t i = 0; i < terms.size(); ++i)
      product *= operands[i].at(flat_of(terms[i], operands[i].shape()));
    out[static_cast<std::size_t>(flat_of(output, out_dims))] += product;
    std::size_t k = 0;
    for (; k < letters.size(); ++k) {
      if (++value[letters[k]] < extent[letters[k]]) break;
      value[letters[k]] = 0;
    }
    if (k == letters.size()) break;
  }
  return Tensor::from_doubles(DType::Float32, out_dims, out);
}

ModelBuilder einsum_model(const std::string& equation,
                          const std::vector<Dims>& shapes,
                          int elem_type = kFloat) {
  ModelBuilder model(12);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    model.input(names.back(), elem_type, std::vector<DimSpec>(shapes[i].begin(), shapes[i].end()));
  }
  model.output("y", elem_type, {});
  auto* attribute = model.node("Einsum", names, {"y"}, "einsum").add_attribute();
  attribute->set_name("equation");
  attribute->set_type(::onnx::AttributeProto::STRING);
  attribute->set_s(equation);
  return model;
}

TEST(OnnxEinsum, MatchesBruteForce) {
  const std::vector<Case> cases{
      {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"ij->ji", "ij->ji", {{3, 4}}},
      {"ji->ij", "ba", {{3, 4}}},  // implicit output: letters in alphabetical order
      {"i,i->", "i,i->", {{5}}},
      {"i,i->", "i,i", {{5}, {5}}},
      {"ii->i", "ii->i", {{4, 4}}},
      {"bii->bi", "...ii ->...i", {{3, 4, 4}}},
      {"ij->i", "ij->i", {{3, 4}}},
      {"ij->", "ij->", {{3, 4}}},
      {"ij,jk->ik", "ij,jk", {{2, 3}, {3, 4}}},
      {"ij,jk,kl->il", "ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}},
      {"i,j->ij", "i,j->ij", {{3}, {4}}},
      {"bij,bkj->bki", "...ij,...kj->...ki", {{2, 3, 4}, {2, 5, 4}}},
      {"iij,jk->ik", "iij,jk->ik", {{3, 3, 2}, {2, 4}}},
      {"abc,cd->", "abc,cd->", {{2, 3, 4}, {4, 2}}},
  };
  for (const Case& test : cases) {
    std::vector<Dims> shapes = test.shapes;
    if (shapes.size() == 1 && test.equation.find(',') != std::string::npos)
      shapes.push_back(shapes[0]);
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      inputs.push_back(tscope::testing::random_tensor(DType::Float32, shapes[i], 40 + i));
    }
    const ImportedModel imported =
        import_model_bytes(einsum_model(test.onnx_equation, shapes).bytes(), "einsum.onnx");
    Function f = function(imported.input_variables(), imported.output_variables());
    EXPECT_TRUE(tscope::testing::all_close(f(inputs)[0], brute_force_einsum(test.equation, inputs),
                                           1e-5, 1e-6))
        << test.onnx_equation;
  }
}

TEST(OnnxEinsum, SymbolicBatchStaysSymbolic) {
  ModelBuilder model(12);
  model.input("q", kFloat, {"n", 2, 3})
      .input("k", kFloat, {"n", 4, 3})
      .output("s", kFloat, {"n", 2, 4});
  auto* attribute = model.node("Einsum", {"q", "k"}, {"s"}, "scores").add_attribute();
  attribute->set_name("equation");
  attribute->set_type(::onnx::AttributeProto::STRING);
  attribute->set_s("bqd,bkd->bqk");
  const ImportedModel imported = import_model_bytes(model.bytes(), "einsum.onnx");
  EXPECT_EQ(imported.outputs[0].variable.type().dims, (Dims{kUnknownDim, 2, 4}));
  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> inputs{tscope::testing::random_tensor(DType::Float32, {5, 2, 3}, 50),
                                   tscope::testing::random_tensor(DType::Float32, {5, 4, 3}, 51)};
  EXPECT_TRUE(tscope::testing::all_close(f(inputs)[0], brute_force_einsum("bqd,bkd->bqk", inputs),
                                         1e-5, 1e-6));
}

TEST(OnnxEinsum, UnsupportedAndInvalidEquationsNameTheEquation) {
  const auto error_of = [](const std::string& equation, const std::vector<Dims>& shapes) {
    try {
      (void)import_model_bytes(einsum_model(equation, shapes).bytes(), "einsum.onnx");
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(equation), std::string::npos) << error.what();
      return error.kind();
    }
    ADD_FAILURE() << equation << " imported";
    return ErrorKind::Internal;
  };
  EXPECT_EQ(error_of("ij,jk->ik", {{2, 1}, {3, 4}}), ErrorKind::Unsupported);  // broadcast 1 vs 3
  EXPECT_EQ(error_of("ij,jk->ik", {{2, 2}, {3, 4}}), ErrorKind::ShapeMismatch);
  EXPECT_EQ(error_of("ijk->i", {{2, 3}}), ErrorKind::ShapeMismatch);
  EXPECT_EQ(error_of("ij->k", {{2, 3}}), ErrorKind::InvalidArgument);
  EXPECT_EQ(error_of("i1->i", {{2, 3}}), ErrorKind::InvalidArgument);
}

TEST(OnnxEinsum, GradientsMatchFiniteDifferences) {
  const std::vector<std::pair<std::string, std::vector<Dims>>> cases{
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}},
      {"bhqd,bhkd->bhqk", {{1, 2, 2, 3}, {1, 2, 3, 3}}},
      {"...ii->...i", {{2, 3, 3}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 2}, {2, 2}}},
      {"i,i->", {{4}, {4}}},
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},
  };
  for (const auto& [equation, shapes] : cases) {
    std::vector<Tensor> point;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      point.push_back(tscope::testing::random_tensor(DType::Float64, shapes[i], 60 + i));
    }
    EXPECT_TRUE(
        testing::gradients_match_numeric(einsum_model(equation, shapes, kDouble).bytes(), point))
        << equation;
  }
}

}  // namespace
}  // namespace tscope::onnx
