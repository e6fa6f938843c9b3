// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Reading whole input files (models, tensors, profiles) with the errors a user needs.
#include <cstdint>
#include <filesystem>
#include <string>

#pragma GCC visibility push(default)

namespace tscope {

/// Most bytes read from a file without a size (a device, a pipe, a /proc file): 256 MiB.
inline constexpr std::uintmax_t kMaxUnsizedFileBytes = std::uintmax_t{256} << 20;

/// The whole file. Io error naming it when it cannot be opened or read, is a directory, or is not
/// a regular file and yields more than kMaxUnsizedFileBytes (so /dev/zero ends in an error instead
/// of reading forever).
[[nodiscard]] std::string read_file_bytes(const std::filesystem::path& path);

}  // namespace tscope

#pragma GCC visibility pop
