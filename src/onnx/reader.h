// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading ONNX protobuf messages: ModelProto parsing with clear errors (files through
// read_file_bytes, tscope/core/file_io.h), and
// TensorProto <-> Tensor conversion.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "tscope/core/dtype.h"
#include "tscope/core/file_io.h"
#include "tscope/core/tensor.h"

namespace tscope::onnx {

/// Parses a ModelProto; Parse error naming `source` when the bytes are not one.
[[nodiscard]] ::onnx::ModelProto parse_model(std::string_view bytes, std::string_view source);

/// The Tensorscope dtype of an ONNX TensorProto data type; Unsupported for the others, naming
/// `what` (a tensor or value name).
[[nodiscard]] DType dtype_from_onnx(int data_type, std::string_view what);
[[nodiscard]] std::string_view onnx_type_name(int data_type);

/// Converts a TensorProto (raw_data or typed fields); Parse error when the data does not match
/// the dims, Unsupported for external data or an unsupported type.
[[nodiscard]] Tensor tensor_from_proto(const ::onnx::TensorProto& proto);
/// The TensorProto of `value` (raw_data, C order).
[[nodiscard]] ::onnx::TensorProto tensor_to_proto(const Tensor& value, const std::string& name);

}  // namespace tscope::onnx
