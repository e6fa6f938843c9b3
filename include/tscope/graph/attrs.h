// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Op attributes: an ordered map from name to a small variant. Because every op uses it, printing,
/// hashing, equality (for merging duplicate nodes) and JSON export come for free.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tscope/core/dtype.h"

#pragma GCC visibility push(default)

namespace tscope {

class Subgraph;

using AttrValue = std::variant<std::int64_t,
                               double,
                               bool,
                               std::string,
                               DType,
                               std::vector<std::int64_t>,
                               std::vector<double>,
                               std::shared_ptr<const Subgraph>>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> values) : values_(values) {}

  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  [[nodiscard]] bool has(const std::string& name) const { return values_.count(name) != 0; }
  [[nodiscard]] const std::map<std::string, AttrValue>& values() const noexcept { return values_; }
  [[nodiscard]] bool empty() const noexcept { return values_.empty(); }

  /// Typed read; throws Internal when missing or of another type (the op schema guarantees it).
  [[nodiscard]] std::int64_t get_int(const std::string& name) const;
  [[nodiscard]] double get_double(const std::string& name) const;
  [[nodiscard]] bool get_bool(const std::string& name) const;
  [[nodiscard]] const std::string& get_string(const std::string& name) const;
  [[nodiscard]] DType get_dtype(const std::string& name) const;
  [[nodiscard]] const std::vector<std::int64_t>& get_ints(const std::string& name) const;
  [[nodiscard]] const std::vector<double>& get_doubles(const std::string& name) const;
  /// A body attribute (subgraph.h), never null.
  [[nodiscard]] const Subgraph& get_subgraph(const std::string& name) const;
  /// Typed read with a default when absent.
  [[nodiscard]] std::int64_t get_int_or(const std::string& name, std::int64_t fallback) const;
  [[nodiscard]] bool get_bool_or(const std::string& name, bool fallback) const;

  [[nodiscard]] std::size_t hash() const noexcept;
  friend bool operator==(const Attrs& a, const Attrs& b) = default;

 private:
  std::map<std::string, AttrValue> values_;
};

/// "1,0" for int lists, "0.5" for doubles, strings as they are, a subgraph's label.
[[nodiscard]] std::string attr_value_to_string(const AttrValue& value);

}  // namespace tscope

#pragma GCC visibility pop
