// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the TensorProto reader behind `tscope run --input-data NAME=FILE.pb`: any
// byte string must give a tensor or raise a tscope::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tscope/core/error.h"
#include "tscope/onnx/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tscope::Tensor value = tscope::onnx::read_tensor_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.pb");
    // Reads every element, so a tensor whose buffer is shorter than its shape shows under ASan.
    double sum = 0;
    for (std::int64_t i = 0; i < value.numel(); ++i) sum += value.at(i);
    (void)sum;
  } catch (const tscope::Error&) {
    // The documented outcome for bad input.
  }
  return 0;
}
