// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bool tensors copied byte for byte from a file (TensorProto raw_data, .npy): the formats store a
// bool per byte and read any non-zero byte as true, while a C++ bool must be 0 or 1.
#include <cstdint>

#include "tscope/core/tensor.h"

namespace tscope::onnx {

/// Makes every byte of a freshly read, contiguous bool tensor 0 or 1.
inline void normalize_bool_bytes(Tensor& value) {
  auto* bytes = static_cast<unsigned char*>(value.raw_data());
  for (std::int64_t i = 0; i < value.numel(); ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

}  // namespace tscope::onnx
