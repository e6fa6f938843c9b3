// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "tscope/core/error.h"
#include "tscope/core/file_io.h"

namespace tscope::profile {
namespace {

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Follows symbolic links to their final target, which need not exist yet (a dangling link names
// the file to create). Relative targets are resolved against the link's directory.
std::string follow_links(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {  // 40: the kernel's own limit (ELOOP)
    struct stat status {};
    if (::lstat(current.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) return current;
    char target[PATH_MAX];
    const ssize_t length = ::readlink(current.c_str(), target, sizeof(target) - 1);
    if (length < 0) {
      throw_error(ErrorKind::Io, "cannot read the symbolic link '{}': {}", current,
                  std::strerror(errno));
    }
    const std::string next(target, static_cast<std::size_t>(length));
    current = next.starts_with('/') ? next : directory_of(current) + "/" + next;
  }
  throw_error(ErrorKind::Io, "cannot write '{}': too many levels of symbolic links", path);
}

void write_all_checked(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      throw_error(ErrorKind::Io, "cannot write '{}': {}", path,
                  written < 0 ? std::strerror(errno) : "no progress");
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

// A device, FIFO or socket: written in place, never replaced by a regular file.
void write_in_place(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_error(ErrorKind::Io, "cannot open '{}': {}", path, std::strerror(errno));
  try {
    write_all_checked(fd, text, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void replace_regular_file(const std::string& path, std::string_view text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw_error(ErrorKind::Io, "cannot create the file '{}' (to write '{}'): {}", temporary,
                path, std::strerror(errno));
  }
  try {
    write_all_checked(fd, text, temporary);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
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

}  // namespace

void write_all_to_fd(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

void write_file_atomically(const std::string& path, std::string_view text) {
  if (path == "-") {
    write_all_checked(STDOUT_FILENO, text, "standard output");
    return;
  }
  const std::string target = follow_links(path);
  struct stat status {};
  if (::stat(target.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) throw_error(ErrorKind::Io, "cannot write '{}': it is a directory", path);
    if (!S_ISREG(status.st_mode)) {
      write_in_place(target, text);
      return;
    }
  }
  replace_regular_file(target, text);
}

void check_output_path(const std::string& path) {
  if (path == "-") return;
  const std::string target = follow_links(path);
  struct stat status {};
  if (::stat(target.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) throw_error(ErrorKind::Io, "cannot write '{}': it is a directory", path);
    if (::access(target.c_str(), W_OK) != 0) {
      throw_error(ErrorKind::Io, "cannot write '{}': {}", path, std::strerror(errno));
    }
    if (!S_ISREG(status.st_mode)) return;  // written in place: no temporary file needed
  }
  const std::string directory = directory_of(target);
  struct stat directory_status {};
  if (::stat(directory.c_str(), &directory_status) != 0) {
    throw_error(ErrorKind::Io, "cannot write '{}': its directory '{}' does not exist", path,
                directory);
  }
  if (!S_ISDIR(directory_status.st_mode)) {
    throw_error(ErrorKind::Io, "cannot write '{}': '{}' is not a directory", path, directory);
  }
  // The temporary file and the rename both need write access to the directory.
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    throw_error(ErrorKind::Io, "cannot write '{}': directory '{}': {}", path, directory,
                std::strerror(errno));
  }
}

std::string read_file(const std::string& path) { return read_file_bytes(path); }

}  // namespace tscope::profile
