// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The table of all ops. Filled once by register_builtin_ops() (src/ops/builtin_ops.cpp), then
/// read-only and safe to read from any thread. Tests, fusion, ONNX mapping, `tscope ops` and the
/// profiler read it; nothing keeps a parallel list indexed by op.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/graph/op_def.h"

#pragma GCC visibility push(default)

namespace tscope {

class OpRegistry {
 public:
  /// Adds an op; throws Internal on a duplicate name or a missing infer/reference kernel.
  void add(OpDef def);
  /// Throws InvalidArgument naming the op when unknown.
  [[nodiscard]] const OpDef& get(std::string_view name) const;
  [[nodiscard]] const OpDef* find(std::string_view name) const noexcept;
  /// All ops sorted by name.
  [[nodiscard]] std::vector<const OpDef*> all() const;
  [[nodiscard]] std::size_t size() const noexcept { return ops_.size(); }

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

}  // namespace tscope

#pragma GCC visibility pop
