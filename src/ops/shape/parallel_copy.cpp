// SPDX-License-Identifier: Apache-2.0
#include "parallel_copy.h"

#include <cstddef>

#include "tscope/core/strided_copy.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops::detail {
namespace {
// Blocks per part: enough that parts of whole blocks come out about equal.
constexpr std::int64_t kBlocksPerPart = 4;

struct CopyJob {
  const char* source;
  char* out;
  std::size_t item;
  Dims lead_shape;    ///< the leading axes the blocks enumerate
  Dims lead_strides;  ///< their source strides, in elements
  Dims block_shape;   ///< the remaining axes: one block
  Dims block_strides;
  std::int64_t block_elements;
  std::int64_t blocks;
  int parts;
};

void copy_part(void* data, int index) {
  const CopyJob& job = *static_cast<const CopyJob*>(data);
  const std::int64_t first = job.blocks * index / job.parts;
  const std::int64_t last = job.blocks * (index + 1) / job.parts;
  for (std::int64_t block = first; block < last; ++block) {
    std::int64_t rest = block;
    std::int64_t offset = 0;
    for (int axis = job.lead_shape.rank() - 1; axis >= 0; --axis) {
      offset += (rest % job.lead_shape[axis]) * job.lead_strides[axis];
      rest /= job.lead_shape[axis];
    }
    const auto out_offset = static_cast<std::size_t>(block * job.block_elements) * job.item;
    tscope::detail::copy_strided(job.source + offset * static_cast<std::int64_t>(job.item),
                                 job.block_shape, job.block_strides, job.item,
                                 job.out + out_offset);
  }
}
}  // namespace

Tensor parallel_contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  const std::int64_t count = x.numel();
  const int parts = threads::parts_for(count);
  const int rank = x.rank();
  // The fewest leading axes that give every part several blocks.
  int lead = 0;
  std::int64_t blocks = 1;
  while (lead < rank - 1 && blocks < kBlocksPerPart * parts) blocks *= x.shape()[lead++];
  if (parts <= 1 || blocks < parts) return x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  CopyJob job{static_cast<const char*>(x.raw_data()),
              static_cast<char*>(out.raw_data()),
              dtype_size(x.dtype()),
              {},
              {},
              {},
              {},
              count / blocks,
              blocks,
              parts};
  for (int axis = 0; axis < rank; ++axis) {
    Dims& shape = axis < lead ? job.lead_shape : job.block_shape;
    Dims& strides = axis < lead ? job.lead_strides : job.block_strides;
    shape.push_back(x.shape()[axis]);
    strides.push_back(x.strides()[axis]);
  }
  threads::run_parts(parts, copy_part, &job);
  return out;
}

}  // namespace tscope::ops::detail
