// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Output helpers of the profile writers.
#include <string>
#include <string_view>

#pragma GCC visibility push(default)

namespace tscope::profile {

/// Writes `text` to the output `path`, so that nothing the user collected is lost and nothing
/// else is clobbered:
/// - "-": standard output;
/// - an existing character device, FIFO or socket (/dev/null, a named pipe): written in place;
/// - a symbolic link: the file it points to (followed through every link), so the link stays;
/// - otherwise a regular file, replaced through a temporary file in its directory, flushed and
///   renamed over it: a reader sees the old file or the complete new one, never a partial one.
/// Throws Error(Io) naming the path and the system error (a directory, a missing directory, no
/// permission, a full disk).
void write_file_atomically(const std::string& path, std::string_view text);

/// Checks, without writing, that write_file_atomically(path, ...) can succeed: the path is not a
/// directory, its directory exists, and it (or the existing file) is writable. Throws Error(Io)
/// naming the path and the problem. Used when flags are parsed, so that a bad destination stops
/// the program at startup rather than losing the profile at exit.
void check_output_path(const std::string& path);

/// Writes all of `text` to a file descriptor, retrying short writes; errors are ignored (used for
/// stderr/stdout on exit paths).
void write_all_to_fd(int fd, std::string_view text) noexcept;

/// Reads a whole file (read_file_bytes: Error(Io) naming the path when it cannot be opened, is a
/// directory, or is a device or pipe yielding more than kMaxUnsizedFileBytes).
[[nodiscard]] std::string read_file(const std::string& path);

}  // namespace tscope::profile

#pragma GCC visibility pop
