// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Output helpers of the profile writers.
#include <string>
#include <string_view>

namespace tscope::profile {

/// Writes `text` to `path` through a temporary file in the same directory, flushed to disk and
/// renamed over `path`: a reader sees the old file or the complete new one, never a partial one.
/// Throws Error(Io) naming the path and the system error.
void write_file_atomically(const std::string& path, std::string_view text);

/// Writes all of `text` to a file descriptor, retrying short writes; errors are ignored (used for
/// stderr/stdout on exit paths).
void write_all_to_fd(int fd, std::string_view text) noexcept;

/// Reads a whole file. Throws Error(Io) naming the path.
[[nodiscard]] std::string read_file(const std::string& path);

}  // namespace tscope::profile
