// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/op_def.h"

#include <cstdint>
#include <string>

#include "tscope/core/checked_math.h"

#include "tscope/graph/op_registry.h"
#include "tscope/graph/traversal.h"

namespace tscope {

std::string OpDef::printed_name(const Attrs& attrs) const {
  if (print != nullptr) return print(*this, attrs);
  std::string text(name);
  if (attrs.empty()) return text;
  text += "{";
  bool first = true;
  for (const auto& [key, value] : attrs.values()) {
    if (!first) text += ", ";
    first = false;
    text += key + "=" + attr_value_to_string(value);
  }
  return text + "}";
}

namespace {
// The bytes of a contiguous tensor, or SIZE_MAX when the count does not fit (or an extent is
// negative): every allocation passes here, so it only tells whether the count fits.
std::size_t byte_count_or_max(const Dims& shape, DType dtype) noexcept {
  std::int64_t count = static_cast<std::int64_t>(dtype_size(dtype));
  for (const std::int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(count, extent, &count)) return SIZE_MAX;
  }
  return count <= kMaxTensorBytes ? static_cast<std::size_t>(count) : SIZE_MAX;
}
}  // namespace

bool KernelContext::input_is_constant(int index) const {
  return node != nullptr && views_constant_data(node->input(index));
}

Tensor& KernelContext::allocate_output(int index, DType dtype, const Dims& shape) const {
  Tensor& slot = *outputs[index];
  if (index == 0 && inplace_input >= 0) {
    const Tensor& source = *inputs[inplace_input];
    // The slot may still share the buffer from the previous call (a kept result).
    const long own = slot.defined() && slot.buffer() == source.buffer() ? 1 : 0;
    if (source.defined() && source.dtype() == dtype && source.shape() == shape &&
        source.is_contiguous() && held_by_at_most(source.buffer(), inplace_holders + own)) {
      slot = source;
      return slot;
    }
  }
  // Steady state of a repeated call: the slot already holds an unshared contiguous tensor of this
  // exact dtype and shape, so nothing needs to change (the VM's per-node fast path).
  if (slot.defined() && slot.dtype() == dtype && slot.shape() == shape && slot.offset() == 0 &&
      held_only_here(slot.buffer()) && slot.is_contiguous()) {
    return slot;
  }
  // Kernels compute output shapes from input values (Reshape, Expand, Tile): a count that does not
  // fit matches no buffer below, and Tensor::empty names the problem.
  const std::size_t needed = byte_count_or_max(shape, dtype);
  const std::shared_ptr<Buffer>& buffer = slot.buffer();
  // Reuse only a buffer no one else sees: a caller holding last call's result keeps it intact.
  if (held_only_here(buffer) && buffer->size_bytes() >= needed &&
      buffer->size_bytes() <= 2 * needed + kTensorAlignment) {
    slot = Tensor::over_buffer(buffer, dtype, shape);
    return slot;
  }
  if (pool != nullptr) {
    if (std::shared_ptr<Buffer> recycled = pool->take(needed)) {
      slot = Tensor::over_buffer(std::move(recycled), dtype, shape);
      return slot;
    }
  }
  try {
    slot = Tensor::empty(dtype, shape, *allocator);
  } catch (Error& error) {
    throw error.add_context(fmt::format("while allocating output {}", index));
  }
  return slot;
}

void OpRegistry::add(OpDef def) {
  TSCOPE_CHECK(def.infer != nullptr, "op " + std::string(def.name) + " has no type rule");
  TSCOPE_CHECK(def.reference.available(),
               "op " + std::string(def.name) + " has no reference kernel");
  const std::string key(def.name);
  TSCOPE_CHECK(ops_.count(key) == 0, "op " + key + " registered twice");
  ops_.emplace(key, std::make_unique<OpDef>(std::move(def)));
}

const OpDef* OpRegistry::find(std::string_view name) const noexcept {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::get(std::string_view name) const {
  const OpDef* def = find(name);
  if (def == nullptr) throw_error(ErrorKind::InvalidArgument, "unknown op '{}'", name);
  return *def;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> result;
  result.reserve(ops_.size());
  for (const auto& [name, def] : ops_) result.push_back(def.get());
  return result;
}

}  // namespace tscope
