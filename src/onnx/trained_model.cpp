// SPDX-License-Identifier: Apache-2.0
// Trained weights back into the model they came from: the original ModelProto, initializer data
// replaced, everything else (nodes, metadata, opsets) untouched.
#include "tscope/onnx/trained_model.h"

#include <fmt/format.h>

#include <unordered_map>

#include "reader.h"
#include "tscope/profile/atomic_file.h"

namespace tscope::onnx {

std::string trained_model_bytes(std::string_view original, const ImportedModel& model) {
  ::onnx::ModelProto proto = parse_model(original, model.source);
  std::unordered_map<std::string, Variable> shared_values;
  for (const NamedVariable& initializer : model.initializers) {
    if (initializer.variable.kind() == VariableKind::Shared) {
      shared_values.emplace(initializer.name, initializer.variable);
    }
  }
  ::onnx::GraphProto& graph = *proto.mutable_graph();
  for (int k = 0; k < graph.initializer_size(); ++k) {
    ::onnx::TensorProto& initializer = *graph.mutable_initializer(k);
    const auto found = shared_values.find(initializer.name());
    if (found == shared_values.end()) continue;
    const Tensor value = found->second.get_value();
    const DType declared = dtype_from_onnx(initializer.data_type(), initializer.name());
    Dims dims;
    for (const std::int64_t extent : initializer.dims()) dims.push_back(extent);
    if (declared != value.dtype() || dims != value.shape()) {
      throw_error(ErrorKind::InvalidArgument,
                  "initializer '{}' is {} {} in the model but {} {} in the import; the bytes are "
                  "not those of the model imported",
                  initializer.name(), dtype_name(declared), dims.to_string(),
                  dtype_name(value.dtype()), value.shape().to_string());
    }
    ::onnx::TensorProto replaced = tensor_to_proto(value, initializer.name());
    replaced.set_doc_string(initializer.doc_string());
    initializer = std::move(replaced);
  }
  return proto.SerializeAsString();
}

void write_trained_model(const ImportedModel& model, const std::filesystem::path& destination) {
  const std::string bytes = trained_model_bytes(read_file_bytes(model.source), model);
  profile::write_file_atomically(destination.string(), bytes);
}

}  // namespace tscope::onnx
