// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Variables: the symbolic values of a graph. A Variable is a cheap handle (shared_ptr) to a
/// VariableNode. Graph inputs, constants and shared variables are free-standing nodes; the output
/// of an Apply is owned by that Apply and its handle keeps the Apply alive (no reference cycles).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "tscope/core/tensor.h"
#include "tscope/graph/provenance.h"
#include "tscope/graph/type.h"

#pragma GCC visibility push(default)

namespace tscope {

class ApplyNode;

enum class VariableKind { Input, Constant, Shared, Output };

/// The persistent, settable value behind a shared variable; several compiled functions that use
/// the same shared variable see one SharedStorage. `value` is read and written under
/// shared_values_mutex(), since calls on several threads read and update it.
struct SharedStorage {
  std::string name;
  Type type;
  Tensor value;
};

/// Guards every SharedStorage::value: a function call reads all its shared values under it at the
/// start and writes all its updates under it at the end, and get_value/set_value take it, so that
/// a call never sees half of another call's updates. One lock for the process, because functions
/// share variables in any combination; it is held only to copy tensor handles, never while a
/// kernel runs.
[[nodiscard]] std::mutex& shared_values_mutex() noexcept;

class VariableNode {
 public:
  std::int64_t id = 0;  ///< unique in the process, creation order
  Type type;
  std::string name;
  VariableKind kind = VariableKind::Input;
  ApplyNode* owner = nullptr;  ///< set when kind == Output; the owner owns this node
  int output_index = -1;
  Tensor constant_value;                   ///< kind == Constant
  std::shared_ptr<SharedStorage> shared;   ///< kind == Shared
  Provenance provenance;                   ///< creation site of a free-standing variable
};

class Variable {
 public:
  Variable() = default;
  explicit Variable(std::shared_ptr<VariableNode> node) : node_(std::move(node)) {}

  [[nodiscard]] bool defined() const noexcept { return node_ != nullptr; }
  explicit operator bool() const noexcept { return defined(); }
  [[nodiscard]] const Type& type() const { return node_->type; }
  [[nodiscard]] DType dtype() const { return node_->type.dtype; }
  [[nodiscard]] int rank() const { return node_->type.rank(); }
  [[nodiscard]] const std::string& name() const { return node_->name; }
  [[nodiscard]] VariableKind kind() const { return node_->kind; }
  [[nodiscard]] ApplyNode* owner() const { return node_->owner; }
  [[nodiscard]] VariableNode* node() const noexcept { return node_.get(); }
  [[nodiscard]] const std::shared_ptr<VariableNode>& node_ptr() const noexcept { return node_; }

  /// Value of a shared variable; throws InvalidArgument for any other kind. Safe to call while
  /// functions run on other threads (shared_values_mutex()).
  [[nodiscard]] Tensor get_value() const;
  /// Replaces a shared variable's value; throws TypeMismatch when dtype/rank/known dims differ.
  void set_value(const Tensor& value) const;
  /// Value of a constant; throws InvalidArgument for any other kind.
  [[nodiscard]] const Tensor& constant_value() const;

  /// How the variable prints inside an Apply's name: its name, "Elemwise{add,no_inplace}.0" for an
  /// unnamed output, "TensorConstant{2.0}" for a small constant.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const Variable& a, const Variable& b) noexcept {
    return a.node_ == b.node_;
  }

 private:
  std::shared_ptr<VariableNode> node_;
};

/// Creates a graph input; `dims` entries may be kUnknownDim. Throws InvalidArgument naming the
/// input when another dim is negative or the byte count overflows (check_type_extents).
[[nodiscard]] Variable make_input(DType dtype, const Dims& dims, std::string name,
                                  const std::source_location& location);
/// Creates a constant holding `value`.
[[nodiscard]] Variable make_constant(const Tensor& value, std::string name,
                                     const std::source_location& location);

/// Hash for unordered containers keyed by node identity.
struct VariableHash {
  std::size_t operator()(const Variable& v) const noexcept {
    return std::hash<const void*>{}(v.node());
  }
};

namespace detail {
[[nodiscard]] std::int64_t next_graph_id() noexcept;
}  // namespace detail

}  // namespace tscope

#pragma GCC visibility pop
