// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared test helpers: deterministic random tensors, allclose with a readable diff, running a graph
// with fast and with reference kernels, and a gtest wrapper around verify_grad.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tscope/tscope.h"
#include "tscope/grad/verify_grad.h"

namespace tscope::testing {

/// Uniform values in [low, high) from a fixed seed; integers are rounded, bools are value > 0.
Tensor random_tensor(DType dtype, const Dims& shape, std::uint64_t seed, double low = -1.0,
                     double high = 1.0);

/// A non-contiguous tensor with the same values as `tensor` (a transposed copy transposed back,
/// or a strided view of a larger buffer for rank 1).
Tensor non_contiguous_copy(const Tensor& tensor);

/// Element-wise |actual - expected| <= atol + rtol * |expected|, same shape and dtype; the
/// failure message names the first bad element and both values. NaNs compare equal to NaNs.
::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol = 1e-5,
                                     double atol = 1e-7);

/// Compiles `outputs` from graph `inputs` and runs them on `values`.
std::vector<Tensor> run_graph(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                              const std::vector<Tensor>& values, bool reference_kernels = false);

/// Runs the graph with fast kernels and with reference kernels and compares every output.
::testing::AssertionResult fast_matches_reference(const std::vector<Variable>& inputs,
                                                  const std::vector<Variable>& outputs,
                                                  const std::vector<Tensor>& values,
                                                  double rtol = 1e-5, double atol = 1e-7);

/// Runs `body`, which must throw a tscope::Error, and returns the error (a test failure, and an
/// Internal error, when nothing is thrown).
template <class Body>
Error error_of(Body body) {
  try {
    body();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no error thrown";
  return Error(ErrorKind::Internal, "no error");
}

/// Whether the error's what() (message and context chain) contains `text`.
inline bool contains(const Error& error, const std::string& text) {
  return std::string(error.what()).find(text) != std::string::npos;
}

/// verify_grad as a gtest assertion.
::testing::AssertionResult gradient_matches_numeric(
    const std::function<Variable(const std::vector<Variable>&)>& build,
    const std::vector<Tensor>& point, const VerifyGradOptions& options = {});

}  // namespace tscope::testing
