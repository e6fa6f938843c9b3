// SPDX-License-Identifier: Apache-2.0
// What Tensorscope knows and sets about the BLAS library itself (OpenBLAS): its description for
// the profile header and the core type it should run on this CPU (its thread count is set with
// the others': tscope/threads/thread_count.h).
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "tscope/ops/linalg.h"

namespace tscope {
namespace {
// OpenBLAS core types whose single-precision kernels use AVX2 or AVX-512 (names as
// openblas_get_corename() prints them, compared case-insensitively).
constexpr std::array<std::string_view, 6> kVectorCores{"haswell",    "zen",        "skylakex",
                                                       "cooperlake", "sapphirerapids", "excavator"};

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}
}  // namespace

std::string blas_description() {
  const char* config = openblas_get_config();
  return fmt::format("OpenBLAS ({}; {} threads; core {})", config != nullptr ? config : "?",
                     openblas_get_num_threads(), openblas_get_corename());
}

std::optional<std::string> recommended_blas_core(std::string_view detected_core,
                                                 std::string_view config, bool cpu_avx2_fma,
                                                 bool cpu_avx512) {
  // Only a DYNAMIC_ARCH build carries the other cores' kernels and reads OPENBLAS_CORETYPE.
  if (config.find("DYNAMIC_ARCH") == std::string_view::npos || !cpu_avx2_fma) return std::nullopt;
  if (std::ranges::find(kVectorCores, lowercase(detected_core)) != kVectorCores.end()) {
    return std::nullopt;
  }
  return cpu_avx512 ? "SkylakeX" : "Haswell";
}

std::optional<std::string> recommended_blas_core() {
  const char* config = openblas_get_config();
  const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  // SkylakeX's kernels need the AVX-512 foundation plus its byte/word, doubleword/quadword and
  // vector-length extensions.
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return recommended_blas_core(openblas_get_corename(), config != nullptr ? config : "", avx2_fma,
                               avx512);
}

}  // namespace tscope
