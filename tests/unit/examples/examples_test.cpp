// SPDX-License-Identifier: Apache-2.0
// Runs the example programs and checks their printed loss curves: each must fall by a stated
// factor within a stated number of steps.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The losses printed as "step <i> loss <value>" lines by `program` run with `steps`.
std::vector<double> loss_curve(const std::string& program, int steps) {
  const std::string command = "\"" + program + "\" " + std::to_string(steps);
  FILE* pipe = popen(command.c_str(), "r");
  std::vector<double> losses;
  if (pipe == nullptr) return losses;
  char line[256];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    int step = 0;
    double loss = 0;
    if (std::sscanf(line, "step %d loss %lf", &step, &loss) == 2) losses.push_back(loss);
  }
  EXPECT_EQ(pclose(pipe), 0) << command;
  return losses;
}

TEST(Examples, LogisticRegressionLossFallsFourfoldIn100Steps) {
  const std::vector<double> losses = loss_curve(TSCOPE_EXAMPLE_LOGISTIC_REGRESSION, 100);
  ASSERT_EQ(losses.size(), 100u);
  EXPECT_NEAR(losses.front(), 0.693147, 1e-5);  // zero weights: log(2) per sample
  EXPECT_LT(losses.back(), losses.front() / 4.0)
      << "first " << losses.front() << " last " << losses.back();
}

TEST(Examples, MlpLossFallsFiftyfoldIn20Steps) {
  const std::vector<double> losses = loss_curve(TSCOPE_EXAMPLE_MLP, 20);
  ASSERT_EQ(losses.size(), 20u);
  EXPECT_LT(losses.back(), losses.front() / 50.0)
      << "first " << losses.front() << " last " << losses.back();
}

}  // namespace
