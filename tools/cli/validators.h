// SPDX-License-Identifier: Apache-2.0
#pragma once
// Range checks for numeric options. CLI11's PositiveNumber and NonNegativeNumber print their
// bound, std::numeric_limits<double>::max(), with std::to_string: a 309-digit number.
#include <CLI/CLI.hpp>
#include <string>

namespace tscope::cli {

/// Accepts numbers > 0: "Value 0 is not a positive number".
inline CLI::Validator positive() {
  return {[](std::string& input) {
            double value = 0;
            if (CLI::detail::lexical_cast(input, value) && value > 0) return std::string();
            return "Value " + input + " is not a positive number";
          },
          "POSITIVE"};
}

/// Accepts numbers >= 0: "Value -1 is not 0 or more".
inline CLI::Validator non_negative() {
  return {[](std::string& input) {
            double value = 0;
            if (CLI::detail::lexical_cast(input, value) && value >= 0) return std::string();
            return "Value " + input + " is not 0 or more";
          },
          "NONNEGATIVE"};
}

}  // namespace tscope::cli
