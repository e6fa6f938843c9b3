// SPDX-License-Identifier: Apache-2.0
// Forward conformance of every elementwise op: the fast kernel (typed loop or SLEEF) against the
// reference kernel over broadcasting, scalar, zero-size and non-contiguous inputs in each
// accepted dtype. The ops and dtypes come from the shared case table (elementwise_cases.h).
#include <ostream>

#include "elementwise_cases.h"

namespace tscope {
namespace {

using testing::ElementwiseCase;
using testing::fast_matches_reference;
using testing::random_tensor;

/// Input shapes of one broadcasting pattern; unary ops use the first, binary the first two.
struct ShapeCase {
  std::string name;
  std::vector<Dims> shapes;
};

const std::vector<ShapeCase>& shape_cases() {
  static const std::vector<ShapeCase> cases = {
      {"same_3x4", {{3, 4}, {3, 4}, {3, 4}}},
      // 35 elements: vector loops run their main body and a tail.
      {"odd_7x5", {{7, 5}, {7, 5}, {7, 5}}},
      {"row_bcast", {{3, 4}, {1, 4}, {4}}},
      {"col_bcast", {{3, 1}, {1, 4}, {3, 1}}},
      {"rank_bcast", {{2, 3, 4}, {4}, {3, 1}}},
      {"scalar", {{5}, {}, {}}},
      {"scalar_first", {{}, {6}, {}}},
      {"zero_size", {{0, 3}, {1, 3}, {3}}},
  };
  return cases;
}

struct ForwardParam {
  const ElementwiseCase* op_case;
  DType dtype;
  const ShapeCase* shapes;
};

std::string param_name(const ForwardParam& p) {
  return p.op_case->op + "_" + std::string(dtype_name(p.dtype)) + "_" + p.shapes->name;
}

void PrintTo(const ForwardParam& p, std::ostream* os) { *os << param_name(p); }

std::vector<ForwardParam> forward_params() {
  std::vector<ForwardParam> params;
  for (const ElementwiseCase& c : testing::elementwise_cases()) {
    for (DType dtype : c.dtypes) {
      for (const ShapeCase& shapes : shape_cases()) params.push_back({&c, dtype, &shapes});
    }
  }
  return params;
}

class ElementwiseForward : public ::testing::TestWithParam<ForwardParam> {};

TEST_P(ElementwiseForward, FastMatchesReference) {
  const ForwardParam& p = GetParam();
  const ElementwiseCase& c = *p.op_case;
  std::vector<Variable> inputs;
  std::vector<Tensor> values;
  for (int i = 0; i < c.arity; ++i) {
    const DType dtype = testing::input_dtype(c, i, p.dtype);
    const Dims& shape = p.shapes->shapes[i];
    const testing::Domain domain = testing::domain_for(c.domains, i, dtype);
    inputs.push_back(tensor(dtype, shape, "in" + std::to_string(i)));
    values.push_back(random_tensor(dtype, shape, 7 + i, domain.low, domain.high));
  }
  const Variable out = testing::build_elementwise(c, inputs);
  EXPECT_TRUE(fast_matches_reference(inputs, {out}, values));
  std::vector<Tensor> strided;
  for (const Tensor& value : values) strided.push_back(testing::non_contiguous_copy(value));
  EXPECT_TRUE(fast_matches_reference(inputs, {out}, strided)) << "non-contiguous inputs";
}

INSTANTIATE_TEST_SUITE_P(Ops,
                         ElementwiseForward,
                         ::testing::ValuesIn(forward_params()),
                         [](const auto& info) { return param_name(info.param); });

TEST(ElementwiseForwardLayouts, BiasRowOverManyRowsMatchesReference) {
  // The row-broadcast fast path with a row longer than any vector width, and a leading axis.
  Variable x = tensor(DType::Float32, {4, 6, 33}, "x");
  Variable bias = tensor(DType::Float32, {33}, "bias");
  Variable scale = tensor(DType::Float32, {}, "scale");
  const std::vector<Tensor> values = {random_tensor(DType::Float32, {4, 6, 33}, 1),
                                      random_tensor(DType::Float32, {33}, 2),
                                      random_tensor(DType::Float32, {}, 3)};
  EXPECT_TRUE(fast_matches_reference(
      {x, bias, scale}, {x + bias, bias - x, x * scale, scale / (x + 2.0), clip(x, bias, 0.5)},
      values));
}

TEST(ElementwiseForwardLayouts, MixedDtypeOperandsAreConvertedBeforeFastPaths) {
  Variable i = tensor(DType::Int32, {3, 5}, "i");
  Variable f = tensor(DType::Float64, {5}, "f");
  const std::vector<Tensor> values = {random_tensor(DType::Int32, {3, 5}, 4, -5.0, 5.0),
                                      random_tensor(DType::Float64, {5}, 5)};
  EXPECT_TRUE(fast_matches_reference({i, f}, {i + f, pow(f, i), exp(i), i > f}, values));
}

}  // namespace
}  // namespace tscope
