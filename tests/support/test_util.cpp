// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace tscope::testing {

Tensor random_tensor(DType dtype, const Dims& shape, std::uint64_t seed, double low, double high) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (double& value : values) {
    value = uniform(rng);
    if (dtype == DType::Bool) value = value > 0 ? 1 : 0;
    if (is_integral(dtype)) value = std::round(value);
  }
  return Tensor::from_doubles(dtype, shape, values);
}

Tensor non_contiguous_copy(const Tensor& tensor) {
  const int rank = tensor.rank();
  if (rank == 0) return tensor.clone();
  // Place the values in a buffer twice as long along the last axis and view every other element.
  Dims wide_shape = tensor.shape();
  wide_shape[rank - 1] *= 2;
  Tensor wide = Tensor::zeros(tensor.dtype(), wide_shape);
  Dims strides = wide.strides();
  strides[rank - 1] = 2;
  Tensor view = wide.view(tensor.shape(), strides, 0);
  const std::size_t item = dtype_size(tensor.dtype());
  const Tensor source = tensor.contiguous();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    std::memcpy(static_cast<char*>(wide.raw_data()) + 2 * i * static_cast<std::int64_t>(item),
                static_cast<const char*>(source.raw_data()) + i * static_cast<std::int64_t>(item), item);
  }
  return view;
}

::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  if (!actual.defined() || !expected.defined()) return ::testing::AssertionFailure() << "undefined tensor";
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << " vs expected "
                                         << dtype_name(expected.dtype());
  }
  if (!(actual.shape() == expected.shape())) {
    return ::testing::AssertionFailure() << "shape " << actual.shape().to_string() << " vs expected "
                                         << expected.shape().to_string();
  }
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.at(i);
    const double e = expected.at(i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(a) && std::isinf(e) && (a > 0) == (e > 0)) continue;
    if (!(std::abs(a - e) <= atol + rtol * std::abs(e))) {
      return ::testing::AssertionFailure()
             << fmt::format("element {} differs: {:.10g} vs expected {:.10g} (shape {})", i, a, e,
                            actual.shape().to_string());
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<Tensor> run_graph(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                              const std::vector<Tensor>& values, bool reference_kernels) {
  FunctionOptions options;
  options.reference_kernels = reference_kernels;
  return function(inputs, outputs, {}, options)(values);
}

::testing::AssertionResult fast_matches_reference(const std::vector<Variable>& inputs,
                                                  const std::vector<Variable>& outputs,
                                                  const std::vector<Tensor>& values, double rtol,
                                                  double atol) {
  const std::vector<Tensor> fast = run_graph(inputs, outputs, values, false);
  const std::vector<Tensor> reference = run_graph(inputs, outputs, values, true);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    ::testing::AssertionResult result = all_close(fast[i], reference[i], rtol, atol);
    if (!result) return result << " (output " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult gradient_matches_numeric(
    const std::function<Variable(const std::vector<Variable>&)>& build, const std::vector<Tensor>& point,
    const VerifyGradOptions& options) {
  const VerifyGradResult result = verify_grad(build, point, options);
  if (result.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << result.message;
}

}  // namespace tscope::testing
