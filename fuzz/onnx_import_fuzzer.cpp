// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the ONNX loader and the kernels behind it: any byte string must either
// import, compile and run, or raise a tscope::Error; anything else (another exception, a crash, a
// sanitizer report) is a finding. Importing and compiling alone never allocates a tensor of a
// computed size, so element-count overflows only show once the model runs: every model that
// compiles runs once, on the deterministic random inputs `tscope run` would give it, unless
// fuzz_limits.h finds it slow.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_limits.h"
#include "tscope/core/error.h"
#include "tscope/graph/traversal.h"
#include "tscope/onnx/import.h"
#include "tscope/onnx/model_inputs.h"
#include "tscope/runtime/function.h"

namespace {

/// Whether any value the model computes (statically known dims) is slow to run.
bool slow_to_run(const tscope::onnx::ImportedModel& model) {
  for (const tscope::Variable& input : model.input_variables()) {
    if (tscope::fuzz::slow_to_run(input.type().dims)) return true;
  }
  for (const tscope::ApplyNode* node :
       tscope::ancestors_in_topological_order(model.output_variables())) {
    for (const tscope::Variable& value : node->outputs()) {
      if (tscope::fuzz::slow_to_run(value.type().dims)) return true;
    }
  }
  return false;
}

/// The model again with every unknown input extent set to 1, so that it can be given inputs.
tscope::onnx::ImportedModel with_known_input_dims(const tscope::onnx::ImportedModel& model,
                                                  std::string_view bytes) {
  tscope::onnx::ImportOptions options;
  for (const tscope::onnx::NamedVariable& input : model.inputs) {
    if (input.variable.type().is_fully_known()) continue;
    tscope::Dims dims = input.variable.type().dims;
    for (int axis = 0; axis < dims.rank(); ++axis) {
      if (dims[axis] < 0) dims[axis] = 1;
    }
    options.input_dims[input.name] = dims;
  }
  if (options.input_dims.empty()) return model;
  return tscope::onnx::import_model_bytes(bytes, "fuzz.onnx", options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const tscope::onnx::ImportedModel imported =
        tscope::onnx::import_model_bytes(bytes, "fuzz.onnx");
    const tscope::onnx::ImportedModel model = with_known_input_dims(imported, bytes);
    tscope::FunctionOptions options;
    options.profile = false;
    const tscope::Function compiled =
        tscope::function(model.input_variables(), model.output_variables(), {}, options);
    if (slow_to_run(model)) return 0;
    (void)compiled(tscope::onnx::model_inputs(model, {}, /*seed=*/1));
  } catch (const tscope::Error&) {
    // The documented outcome for bad input.
  }
  return 0;
}
