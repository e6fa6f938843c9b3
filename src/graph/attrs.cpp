// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/attrs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tscope/core/error.h"
#include "tscope/graph/subgraph.h"

namespace tscope {
namespace {
template <class T>
const T& get_typed(const std::map<std::string, AttrValue>& values, const std::string& name) {
  auto it = values.find(name);
  TSCOPE_CHECK(it != values.end(), "missing attribute '" + name + "'");
  const T* value = std::get_if<T>(&it->second);
  TSCOPE_CHECK(value != nullptr, "attribute '" + name + "' has another type");
  return *value;
}
}  // namespace

std::int64_t Attrs::get_int(const std::string& name) const {
  return get_typed<std::int64_t>(values_, name);
}
double Attrs::get_double(const std::string& name) const { return get_typed<double>(values_, name); }
bool Attrs::get_bool(const std::string& name) const { return get_typed<bool>(values_, name); }
const std::string& Attrs::get_string(const std::string& name) const {
  return get_typed<std::string>(values_, name);
}
DType Attrs::get_dtype(const std::string& name) const { return get_typed<DType>(values_, name); }
const std::vector<std::int64_t>& Attrs::get_ints(const std::string& name) const {
  return get_typed<std::vector<std::int64_t>>(values_, name);
}
const std::vector<double>& Attrs::get_doubles(const std::string& name) const {
  return get_typed<std::vector<double>>(values_, name);
}
const Subgraph& Attrs::get_subgraph(const std::string& name) const {
  const auto& body = get_typed<std::shared_ptr<const Subgraph>>(values_, name);
  TSCOPE_CHECK(body != nullptr, "attribute '" + name + "' holds no subgraph");
  return *body;
}
std::int64_t Attrs::get_int_or(const std::string& name, std::int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}
bool Attrs::get_bool_or(const std::string& name, bool fallback) const {
  return has(name) ? get_bool(name) : fallback;
}

std::size_t Attrs::hash() const noexcept {
  std::size_t seed = values_.size();
  for (const auto& [name, value] : values_) {
    const std::size_t item = std::hash<std::string>{}(name) ^
                             (std::hash<std::string>{}(attr_value_to_string(value)) << 1);
    seed ^= item + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  }
  return seed;
}

std::string attr_value_to_string(const AttrValue& value) {
  return std::visit(
      [](const auto& item) -> std::string {
        using T = std::decay_t<decltype(item)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return item;
        } else if constexpr (std::is_same_v<T, bool>) {
          return item ? "True" : "False";
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(item));
        } else if constexpr (std::is_same_v<T, double>) {
          return fmt::format("{:g}", item);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(item);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Subgraph>>) {
          return item != nullptr ? item->label() : std::string("<no body>");
        } else {
          return fmt::format("{}", fmt::join(item, ","));
        }
      },
      value);
}

}  // namespace tscope
