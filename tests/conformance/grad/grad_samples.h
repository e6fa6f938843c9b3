// SPDX-License-Identifier: Apache-2.0
#pragma once
// Gradient samples for the ops outside the elementwise case table: small float64 graphs, each
// checked against finite differences. Together they reach every pullback of those ops; the
// coverage test walks the registry to make sure of it.
#include <ostream>
#include <string>
#include <vector>

#include "support/test_util.h"

namespace tscope::testing {

struct GradSample {
  std::string name;          ///< a test-name-safe id
  std::vector<Dims> shapes;  ///< one float64 input per entry
  Variable (*build)(const std::vector<Variable>& inputs);
  double low = -1.0;  ///< inputs are uniform in [low, high)
  double high = 1.0;
  VerifyGradOptions options = {};
};

const std::vector<GradSample>& grad_samples();

/// gtest prints a parameter by its name.
inline void PrintTo(const GradSample& sample, std::ostream* os) { *os << sample.name; }

}  // namespace tscope::testing
