// SPDX-License-Identifier: Apache-2.0
#pragma once
/// ONNX import: an .onnx model becomes an ordinary Tensorscope graph, so the same compiler, VM and
/// profiler run it.
///
///   onnx::ImportedModel model = onnx::import_model("resnet18.onnx");
///   Function f = function(model.input_variables(), model.output_variables());
///
/// Graph inputs become input Variables (symbolic dims stay unknown unless ImportOptions gives
/// them), initializers become shared variables (or constants), and each ONNX node becomes one or
/// more ops whose provenance is the node: creation site "<model file>:<node index>" and user op
/// "onnx:<OpType> '<node name>'", so profiles and errors lead back to the model. Output Variables
/// carry the ONNX tensor names. Nodes whose inputs are all constants are evaluated at import time
/// (the shape arithmetic exporters emit folds away).
///
/// With ImportOptions::trainable the graph is the model's training form (docs/onnx.md, "Training
/// an imported model"): `parameters` lists the weights to pass to grad(), and `updates` the model
/// state a training function applies after each call.
///
/// Errors name the file, the node (name, op type), the opset and the problem: Parse for a
/// truncated or corrupt file, Unsupported for an op, attribute, data type or opset Tensorscope
/// does not implement.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/dims.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/variable.h"
#include "tscope/runtime/function.h"

#pragma GCC visibility push(default)

namespace tscope::onnx {

/// Opsets of the default domain the importer accepts. Converters target 7 to 17; older models
/// import where their ops' semantics are handled (binary ops' opt-in broadcasting) and fail with
/// Unsupported naming the op otherwise.
inline constexpr std::int64_t kMinOpset = 1;
inline constexpr std::int64_t kMaxOpset = 17;

struct ImportOptions {
  /// Dims for graph inputs, by input name; they replace the declared (possibly symbolic) dims. A
  /// name that is no graph input is an InvalidArgument error listing the inputs.
  std::map<std::string, Dims, std::less<>> input_dims;
  /// Initializers become constants instead of shared variables.
  bool initializers_as_constants = false;
  /// The model's training form: float initializers of rank >= 1 are shared variables (the
  /// others, which feed shapes, axes and scalar operands, are constants), BatchNormalization
  /// normalises with the batch's statistics and updates its running averages, and Dropout draws
  /// masks with its ratio. Together with initializers_as_constants: InvalidArgument.
  bool trainable = false;
  /// Seed of the random stream active Dropouts draw from (trainable only).
  std::uint64_t random_seed = 0;
  /// Graph inputs given values at import, by name: each becomes a constant as an initializer
  /// would (for inputs a converter must know, such as Resize's scales) and leaves `inputs`. A
  /// value whose dtype is not the declared one is an InvalidArgument error naming the input.
  std::map<std::string, Tensor, std::less<>> input_values;
};

struct NamedVariable {
  std::string name;  ///< the ONNX value name
  Variable variable;
};

struct ImportedModel {
  std::string source;       ///< the file path, or the name given with the bytes
  std::int64_t opset = 0;   ///< of the default ("ai.onnx") domain
  std::string producer;     ///< "pytorch 1.13.1"
  std::int64_t node_count = 0;
  std::vector<NamedVariable> inputs;        ///< graph inputs that are not initializers, in order
  std::vector<NamedVariable> outputs;       ///< in order
  std::vector<NamedVariable> initializers;  ///< shared variables (or constants)
  /// Trainable import: the shared float initializers the outputs depend on through the graph, in
  /// initializer order; neither BatchNormalization running averages nor values converters read
  /// only at import (Resize's scales). Empty otherwise.
  std::vector<NamedVariable> parameters;
  /// Trainable import: what a training function must apply after each call (running averages,
  /// Dropout's random states). Empty otherwise.
  std::vector<Update> updates;

  [[nodiscard]] std::vector<Variable> input_variables() const;
  [[nodiscard]] std::vector<Variable> output_variables() const;
};

/// Reads and imports a model file.
[[nodiscard]] ImportedModel import_model(const std::filesystem::path& path,
                                         const ImportOptions& options = {});
/// Imports a serialized ModelProto held in memory; `source` names it in errors and provenance.
[[nodiscard]] ImportedModel import_model_bytes(std::string_view bytes,
                                               std::string source,
                                               const ImportOptions& options = {});

/// Reads a serialized TensorProto file (.pb), the format of ONNX's test data.
[[nodiscard]] Tensor read_tensor_file(const std::filesystem::path& path);
/// Parses a serialized TensorProto held in memory; `source` names it in errors.
[[nodiscard]] Tensor read_tensor_bytes(std::string_view bytes, std::string_view source);

/// ONNX op types (default domain) the importer converts, sorted.
[[nodiscard]] std::vector<std::string> supported_op_types();

}  // namespace tscope::onnx

#pragma GCC visibility pop
