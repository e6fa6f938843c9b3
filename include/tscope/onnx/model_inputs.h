// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Input data for running an imported model from the command line: dims given as "1x3x224x224",
/// random tensors of the declared types, and tensors read from .pb (TensorProto) or .npy files.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/dims.h"
#include "tscope/core/tensor.h"
#include "tscope/onnx/import.h"

#pragma GCC visibility push(default)

namespace tscope::onnx {

/// "1x3x224x224" -> (1, 3, 224, 224); InvalidArgument naming `text` otherwise.
[[nodiscard]] Dims parse_dims(std::string_view text);

/// Splits "NAME=VALUE"; InvalidArgument naming the option when there is no '='.
[[nodiscard]] std::pair<std::string, std::string> split_assignment(std::string_view text,
                                                                   std::string_view option);

/// A tensor from a .pb (TensorProto) or .npy file (little-endian, C order, the dtypes Tensorscope
/// has); Parse error naming the file when it is malformed.
[[nodiscard]] Tensor read_input_file(const std::filesystem::path& path);
/// A tensor from the bytes of a .npy file held in memory; `source` names it in errors.
[[nodiscard]] Tensor read_npy_bytes(const std::string& bytes, const std::filesystem::path& source);

/// Writes `value` as a serialized TensorProto named `name`.
void write_tensor_file(const std::filesystem::path& path, const Tensor& value,
                       const std::string& name);

/// One tensor per model input: from `files` by input name where given, else random values of the
/// declared dtype and dims (floats uniform in [-1, 1), integers in [0, 10), bools fair). An input
/// with unknown dims and no file is an InvalidArgument naming it; a file whose dtype or dims
/// contradict the declared type is a TypeMismatch or ShapeMismatch naming input and file.
[[nodiscard]] std::vector<Tensor> model_inputs(
    const ImportedModel& model,
    const std::map<std::string, std::filesystem::path, std::less<>>& files,
    std::uint64_t seed);

}  // namespace tscope::onnx

#pragma GCC visibility pop
