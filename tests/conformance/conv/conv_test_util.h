// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers of the convolution and pooling tests: shape constants for the gradient ops, the impl
// that ran for an op in a profiled call, and a check that an Error names given shapes.
#include <string>
#include <vector>

#include "support/test_util.h"

namespace tscope::testing {

/// A constant int64 vector holding `shape` (the shape input of ConvGradI/ConvGradW/...).
inline Variable shape_constant(const Dims& shape) {
  return constant(Tensor::from_vector<std::int64_t>({shape.rank()},
                                                    std::vector<std::int64_t>(shape.begin(), shape.end())));
}

/// Runs `outputs` once with profiling and returns the impl of every node of registry op
/// `op_kind` ("dnnl", "ref"), joined by ",".
inline std::string impls_of(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                            const std::vector<Tensor>& values, const std::string& op_kind,
                            bool reference_kernels = false) {
  FunctionOptions options;
  options.profile = true;
  options.reference_kernels = reference_kernels;
  Function f = function(inputs, outputs, {}, options);
  (void)f(values);
  std::string impls;
  for (const profile::NodeRecord& node : f.profile_record().nodes) {
    if (node.op_kind != op_kind) continue;
    impls += (impls.empty() ? "" : ",") + node.impl;
  }
  return impls.empty() ? "<no " + op_kind + " node>" : impls;
}

/// Success when `build` throws an Error of `kind` whose message contains every one of `parts`.
template <class Build>
::testing::AssertionResult throws_naming(Build&& build, ErrorKind kind,
                                         const std::vector<std::string>& parts) {
  try {
    build();
  } catch (const Error& error) {
    if (error.kind() != kind) {
      return ::testing::AssertionFailure()
             << "kind " << error_kind_name(error.kind()) << ": " << error.what();
    }
    for (const std::string& part : parts) {
      if (error.message().find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "'" << part << "' not in: " << error.message();
      }
    }
    return ::testing::AssertionSuccess() << error.what();
  }
  return ::testing::AssertionFailure() << "nothing was thrown";
}

}  // namespace tscope::testing
