// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A profile that several compiled functions write into (Theano's shared ProfileStats). Each
/// function registers itself as a source; snapshot() turns live counters into the Profile model.
/// A function that dies hands in its final record first, so nothing collected is lost.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

class ProfileSource {
 public:
  virtual ~ProfileSource() = default;
  /// The current record. A compiled function waits for its calls in flight (it takes each of its
  /// execution frames in turn), so the record holds whole calls only; called without the
  /// collector's lock held.
  [[nodiscard]] virtual FunctionRecord snapshot() const = 0;
};

class ProfileCollector {
 public:
  explicit ProfileCollector(std::string title = "") : title_(std::move(title)) {}

  void attach(const std::shared_ptr<const ProfileSource>& source);
  /// Stores the final record of `source`, which is being destroyed.
  void retire(const ProfileSource* source, FunctionRecord record);
  /// Every attached function, in attach order.
  [[nodiscard]] Profile snapshot() const;
  [[nodiscard]] const std::string& title() const noexcept { return title_; }

 private:
  struct Entry {
    const ProfileSource* key;
    std::weak_ptr<const ProfileSource> live;
    std::optional<FunctionRecord> retired;
  };
  std::string title_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace tscope::profile

#pragma GCC visibility pop
