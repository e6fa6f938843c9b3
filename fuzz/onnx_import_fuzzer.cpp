// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the ONNX loader: any byte string must either import or raise a
// tscope::Error; anything else (another exception, a crash, an ASan report) is a finding. Models
// that import are also compiled, which exercises the builders' type rules on odd graphs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tscope/core/error.h"
#include "tscope/onnx/import.h"
#include "tscope/runtime/function.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tscope::onnx::ImportedModel model = tscope::onnx::import_model_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    tscope::FunctionOptions options;
    options.profile = false;
    (void)tscope::function(model.input_variables(), model.output_variables(), {}, options);
  } catch (const tscope::Error&) {
    // The documented outcome for bad input.
  }
  return 0;
}
