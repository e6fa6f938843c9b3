// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tscope/core/error.h"

namespace tscope::profile {

void write_all_to_fd(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

void write_file_atomically(const std::string& path, std::string_view text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw_error(ErrorKind::Io, "cannot create profile file '{}': {}", temporary,
                std::strerror(errno));
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t written = ::write(fd, rest.data(), rest.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      throw_error(ErrorKind::Io, "cannot write profile file '{}': {}", temporary,
                  std::strerror(saved));
    }
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    throw_error(ErrorKind::Io, "cannot rename '{}' to '{}': {}", temporary, path,
                std::strerror(saved));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw_error(ErrorKind::Io, "cannot open '{}'", path);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace tscope::profile
