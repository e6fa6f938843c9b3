// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/variable.h"

#include <atomic>

#include <fmt/format.h>

#include "tscope/graph/apply.h"

namespace tscope {

namespace detail {
std::int64_t next_graph_id() noexcept {
  static std::atomic<std::int64_t> counter{0};
  return ++counter;
}
}  // namespace detail

std::mutex& shared_values_mutex() noexcept {
  // Leaked: functions may run from exit handlers and detached threads during static destruction.
  static std::mutex& mutex = *new std::mutex();
  return mutex;
}

Tensor Variable::get_value() const {
  if (!defined() || node_->kind != VariableKind::Shared) {
    throw_error(ErrorKind::InvalidArgument, "get_value() on '{}', which is not a shared variable",
                defined() ? to_string() : "<undefined>");
  }
  std::lock_guard lock(shared_values_mutex());
  return node_->shared->value;
}

void Variable::set_value(const Tensor& value) const {
  if (!defined() || node_->kind != VariableKind::Shared) {
    throw_error(ErrorKind::InvalidArgument, "set_value() on '{}', which is not a shared variable",
                defined() ? to_string() : "<undefined>");
  }
  if (!node_->type.accepts(value)) {
    throw_error(ErrorKind::TypeMismatch,
                "shared variable '{}' has type {}; the new value is {} {}", node_->name,
                node_->type.to_string(), dtype_name(value.dtype()), value.shape().to_string());
  }
  std::lock_guard lock(shared_values_mutex());
  node_->shared->value = value;
}

const Tensor& Variable::constant_value() const {
  if (!defined() || node_->kind != VariableKind::Constant) {
    throw_error(ErrorKind::InvalidArgument, "'{}' is not a constant",
                defined() ? to_string() : "<undefined>");
  }
  return node_->constant_value;
}

std::string Variable::to_string() const {
  if (!defined()) return "<undefined>";
  if (!node_->name.empty()) return node_->name;
  switch (node_->kind) {
    case VariableKind::Constant: {
      const Tensor& value = node_->constant_value;
      if (value.numel() == 1) return fmt::format("TensorConstant{{{:g}}}", value.at(0));
      return fmt::format("TensorConstant{{{}}}", value.shape().to_string());
    }
    case VariableKind::Output:
      return fmt::format("{}.{}", node_->owner->op_string(), node_->output_index);
    case VariableKind::Shared:
      return fmt::format("<shared {}>", node_->type.to_string());
    case VariableKind::Input:
      break;
  }
  return fmt::format("<{}>", node_->type.to_string());
}

Variable make_input(DType dtype, const Dims& dims, std::string name,
                    const std::source_location& location) {
  check_type_extents(Type{dtype, dims}, fmt::format("input '{}'", name));
  auto node = std::make_shared<VariableNode>();
  node->id = detail::next_graph_id();
  node->type = Type{dtype, dims};
  node->name = std::move(name);
  node->kind = VariableKind::Input;
  node->provenance = Provenance{SourceSite::from(location), "input"};
  return Variable(std::move(node));
}

Variable make_constant(const Tensor& value, std::string name,
                       const std::source_location& location) {
  auto node = std::make_shared<VariableNode>();
  node->id = detail::next_graph_id();
  node->type = Type{value.dtype(), value.shape()};
  node->name = std::move(name);
  node->kind = VariableKind::Constant;
  node->constant_value = value;
  node->provenance = Provenance{SourceSite::from(location), "constant"};
  return Variable(std::move(node));
}

}  // namespace tscope
