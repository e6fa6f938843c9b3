// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/file_io.h"

#include <fstream>

#include "tscope/core/error.h"

namespace tscope {

std::string read_file_bytes(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error) throw_error(ErrorKind::Io, "cannot open '{}': {}", path.string(), error.message());
  if (std::filesystem::is_directory(status)) {
    throw_error(ErrorKind::Io, "'{}' is a directory, not a file", path.string());
  }
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw_error(ErrorKind::Io, "cannot open '{}'", path.string());
  // A regular file is read up to the size it has now. Devices, pipes and /proc files (size 0)
  // have no size, and /dev/zero never ends: those stop at kMaxUnsizedFileBytes.
  const std::uintmax_t size =
      std::filesystem::is_regular_file(status) ? std::filesystem::file_size(path, error) : 0;
  const bool sized = !error && size > 0;
  const std::uintmax_t limit = sized ? size : kMaxUnsizedFileBytes;
  std::string bytes;
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (bytes.size() <= limit) {
    const std::size_t wanted = sized ? static_cast<std::size_t>(limit) - bytes.size() : kChunk;
    if (wanted == 0) break;
    const std::size_t start = bytes.size();
    bytes.resize(start + wanted);
    stream.read(bytes.data() + start, static_cast<std::streamsize>(wanted));
    bytes.resize(start + static_cast<std::size_t>(stream.gcount()));
    if (!stream) break;
  }
  if (stream.bad()) throw_error(ErrorKind::Io, "cannot read '{}'", path.string());
  if (bytes.size() > limit) {
    throw_error(ErrorKind::Io, "'{}' is not a regular file and yields more than {} bytes, the "
                "limit for devices and pipes; copy it to a regular file", path.string(), limit);
  }
  return bytes;
}

}  // namespace tscope
