// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for `tscope run --input NAME=DIMS`: the dims parser, then what the command
// does with the dims it accepts, random input data of that shape. Any string must give a tensor
// or raise a tscope::Error (a shape too large to allocate included).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_limits.h"
#include "tscope/core/error.h"
#include "tscope/graph/constructors.h"
#include "tscope/onnx/model_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const tscope::Dims dims = tscope::onnx::parse_dims(text);
    // What the parser accepts prints back to an equivalent string.
    std::string printed;
    for (const std::int64_t extent : dims) {
      if (extent < 0) std::abort();
      printed += (printed.empty() ? "" : "x") + std::to_string(extent);
    }
    if (!(tscope::onnx::parse_dims(printed) == dims)) std::abort();
    if (tscope::fuzz::slow_to_run(dims)) return 0;
    // An imported model whose input got these dims from --input (ImportOptions::input_dims).
    tscope::onnx::ImportedModel model;
    model.inputs.push_back({"x", tscope::tensor(tscope::DType::Float32, dims, "x")});
    (void)tscope::onnx::model_inputs(model, {}, /*seed=*/1);
  } catch (const tscope::Error&) {
    // The documented outcome for bad input.
  }
  return 0;
}
