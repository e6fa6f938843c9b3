// SPDX-License-Identifier: Apache-2.0
#include "signature_cost.h"

#include <span>

#include "tscope/core/dtype.h"

namespace tscope::runtime {

std::optional<Cost> signature_cost(const ApplyNode& node,
                                   const std::vector<profile::TensorRecord>& inputs,
                                   const std::vector<profile::TensorRecord>& outputs) {
  const OpDef& op = node.op();
  if (op.cost == nullptr || (inputs.empty() && outputs.empty()) ||
      outputs.size() != static_cast<std::size_t>(node.num_outputs())) {
    return std::nullopt;
  }
  std::vector<Dims> input_shapes, output_shapes;
  std::vector<DType> input_dtypes;
  for (const profile::TensorRecord& tensor : inputs) {
    input_shapes.emplace_back(std::span<const std::int64_t>(tensor.shape));
    input_dtypes.push_back(parse_dtype(tensor.dtype).value_or(DType::Float32));
  }
  for (const profile::TensorRecord& tensor : outputs) {
    output_shapes.emplace_back(std::span<const std::int64_t>(tensor.shape));
  }
  return op.cost(CostContext{op, input_shapes, output_shapes, input_dtypes, node.attrs()});
}

std::int64_t output_bytes(const std::vector<profile::TensorRecord>& outputs) {
  std::int64_t bytes = 0;
  for (const profile::TensorRecord& tensor : outputs) {
    if (const std::optional<DType> dtype = parse_dtype(tensor.dtype)) {
      std::int64_t count = 1;
      for (std::int64_t extent : tensor.shape) count *= extent;
      bytes += count * static_cast<std::int64_t>(dtype_size(*dtype));
    }
  }
  return bytes;
}

}  // namespace tscope::runtime
