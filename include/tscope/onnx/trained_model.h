// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Writing the weights of a trained import back into its ONNX model, so the result runs
/// anywhere ONNX does.
///
///   onnx::write_trained_model(model, "trained.onnx");  // after training `model`'s parameters
#include <filesystem>
#include <string>
#include <string_view>

#include "tscope/onnx/import.h"

#pragma GCC visibility push(default)

namespace tscope::onnx {

/// `original` (the serialized ModelProto `model` was imported from) with the data of every
/// top-level initializer that is a shared variable of `model` (parameters and running averages)
/// replaced by its current value; everything else is kept as it was. Throws Parse when
/// `original` is no ModelProto, InvalidArgument when an initializer's dtype or dims differ from
/// the variable's (bytes of another model), naming the initializer.
[[nodiscard]] std::string trained_model_bytes(std::string_view original,
                                              const ImportedModel& model);

/// Reads the model file `model.source`, replaces its weights as trained_model_bytes does and
/// writes the result to `destination` atomically (a reader sees the old file or the complete new
/// one). Throws Io naming the path when a file cannot be read or written.
void write_trained_model(const ImportedModel& model, const std::filesystem::path& destination);

}  // namespace tscope::onnx

#pragma GCC visibility pop
