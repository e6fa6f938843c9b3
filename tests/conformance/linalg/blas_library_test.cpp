// SPDX-License-Identifier: Apache-2.0
// What Tensorscope decides about the BLAS library: which OpenBLAS core type a CPU should run when
// OpenBLAS's own detection fell back to kernels without AVX2.
#include <gtest/gtest.h>

#include "tscope/ops/linalg.h"

namespace tscope {
namespace {
constexpr std::string_view kDynamic = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott";

TEST(BlasCore, GenericCoreOnAVectorCpuGetsTheVectorKernels) {
  EXPECT_EQ(recommended_blas_core("Prescott", kDynamic, true, true), "SkylakeX");
  EXPECT_EQ(recommended_blas_core("Prescott", kDynamic, true, false), "Haswell");
  EXPECT_EQ(recommended_blas_core("Sandybridge", kDynamic, true, false), "Haswell");
  EXPECT_EQ(recommended_blas_core("nehalem", kDynamic, true, true), "SkylakeX");
}

TEST(BlasCore, LeavesAGoodDetectionOrAFixedBuildAlone) {
  for (std::string_view core : {"Haswell", "SkylakeX", "Cooperlake", "Zen", "HASWELL"}) {
    EXPECT_EQ(recommended_blas_core(core, kDynamic, true, true), std::nullopt) << core;
  }
  // No AVX2: the generic kernels are what the CPU can run.
  EXPECT_EQ(recommended_blas_core("Nehalem", kDynamic, false, false), std::nullopt);
  // A build for one core has no other kernels to switch to.
  EXPECT_EQ(recommended_blas_core("Prescott", "OpenBLAS 0.3.21 NO_LAPACKE Prescott", true, true),
            std::nullopt);
}

TEST(BlasCore, ThisProcessAnswersConsistently) {
  // Whatever the machine, the answer is a core the CPU can run, or none.
  const std::optional<std::string> core = recommended_blas_core();
  if (core) {
    EXPECT_TRUE(*core == "SkylakeX" || *core == "Haswell") << *core;
  }
  EXPECT_NE(blas_description().find("core "), std::string::npos);
}

}  // namespace
}  // namespace tscope
