// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/profile_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

#include "tscope/core/error.h"
#include "tscope/profile/atomic_file.h"

namespace tscope::profile {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool parse_bool(std::string_view name, std::string_view value) {
  if (value == "true" || value == "True" || value == "1") return true;
  if (value == "false" || value == "False" || value == "0") return false;
  throw_error(ErrorKind::BadFlag,
              "TSCOPE_FLAGS: {}={} is not a boolean; valid values: true, false, 1, 0", name, value);
}

std::int64_t parse_integer(std::string_view name, std::string_view value, std::int64_t minimum) {
  std::int64_t result = 0;
  const auto [end, status] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (status != std::errc() || end != value.data() + value.size() || result < minimum ||
      result > (std::int64_t{1} << 40)) {
    throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: {}={} is not valid; expected an integer >= {}",
                name, value, minimum);
  }
  return result;
}

int parse_int(std::string_view name, std::string_view value, int minimum) {
  const std::int64_t result = parse_integer(name, value, minimum);
  if (result > 1'000'000) {
    throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: {}={} is too large (at most 1000000)", name,
                value);
  }
  return static_cast<int>(result);
}

// Each thread that records gets a ring of this size; more than this is a typo, not a plan.
constexpr int kMaxTraceBufferMegabytes = 4096;

std::string output_path(std::string_view name, std::string_view value) {
  if (value.empty()) {
    throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: {} is empty; expected a file path", name);
  }
  return std::string(value);
}

using Setter = std::function<void(ProfileOptions&, std::string_view name, std::string_view value)>;

const std::map<std::string_view, Setter>& setters() {
  // Leaked (never destroyed): see process_flags().
  static const auto& table = *new std::map<std::string_view, Setter>{
      {"profile", [](ProfileOptions& o, auto n, auto v) { o.profile = parse_bool(n, v); }},
      {"profile_memory",
       [](ProfileOptions& o, auto n, auto v) { o.profile_memory = parse_bool(n, v); }},
      {"profile_optimizer",
       [](ProfileOptions& o, auto n, auto v) { o.profile_optimizer = parse_bool(n, v); }},
      {"allow_gc", [](ProfileOptions& o, auto n, auto v) { o.allow_gc = parse_bool(n, v); }},
      {"profiling.n_apply",
       [](ProfileOptions& o, auto n, auto v) { o.n_apply = parse_int(n, v, 1); }},
      {"profiling.n_ops", [](ProfileOptions& o, auto n, auto v) { o.n_ops = parse_int(n, v, 1); }},
      {"profiling.min_memory_size",
       [](ProfileOptions& o, auto n, auto v) { o.min_memory_size = parse_integer(n, v, 0); }},
      {"profiling.destination",
       [](ProfileOptions& o, auto n, auto v) {
         if (v.empty()) {
           throw_error(ErrorKind::BadFlag,
                       "TSCOPE_FLAGS: {} is empty; valid values: stderr, stdout or a file path", n);
         }
         o.destination = std::string(v);
       }},
      {"profiling.html", [](ProfileOptions& o, auto n, auto v) { o.html = output_path(n, v); }},
      {"profiling.folded", [](ProfileOptions& o, auto n, auto v) { o.folded = output_path(n, v); }},
      {"profiling.ignore_first_call",
       [](ProfileOptions& o, auto n, auto v) { o.ignore_first_call = parse_bool(n, v); }},
      {"profiling.output_line_width",
       [](ProfileOptions& o, auto n, auto v) { o.output_line_width = parse_int(n, v, 1); }},
      {"profiling.n_zones",
       [](ProfileOptions& o, auto n, auto v) { o.n_zones = parse_int(n, v, 1); }},
      {"profiling.zone_sort",
       [](ProfileOptions& o, auto n, auto v) {
         if (v != "tottime" && v != "cumtime") {
           throw_error(ErrorKind::BadFlag,
                       "TSCOPE_FLAGS: {}={} is not valid; valid values: tottime, cumtime", n, v);
         }
         o.zones_by_cumtime = v == "cumtime";
       }},
      {"profiling.trace", [](ProfileOptions& o, auto n, auto v) { o.trace = output_path(n, v); }},
      {"profiling.directory",
       [](ProfileOptions& o, auto n, auto v) { o.directory = output_path(n, v); }},
      {"profiling.trace_buffer_mb",
       [](ProfileOptions& o, auto n, auto v) {
         const int megabytes = parse_int(n, v, 1);
         if (megabytes > kMaxTraceBufferMegabytes) {
           throw_error(ErrorKind::BadFlag,
                       "TSCOPE_FLAGS: {}={} is too large (at most {} per thread)", n, v,
                       kMaxTraceBufferMegabytes);
         }
         o.trace_buffer_bytes = std::int64_t{megabytes} << 20;
       }},
      {"profiling.min_peak_memory",
       [](ProfileOptions& o, auto n, auto v) { o.min_peak_memory = parse_bool(n, v); }},
  };
  return table;
}

std::string valid_names() {
  std::string names;
  for (const auto& [name, setter] : setters()) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

}  // namespace

namespace {
// The shard directory is made when the first worker starts: it must be a directory already, or
// be creatable in one that exists.
void check_directory_flag(std::string_view flag, const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    if (!S_ISDIR(status.st_mode)) {
      throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: {}={}: it exists and is not a directory", flag,
                  path);
    }
    if (::access(path.c_str(), W_OK | X_OK) != 0) {
      throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: {}={}: {}", flag, path, std::strerror(errno));
    }
    return;
  }
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const std::size_t slash = trimmed.rfind('/');
  const std::string parent =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : trimmed.substr(0, slash));
  if (::stat(parent.c_str(), &status) != 0 || !S_ISDIR(status.st_mode)) {
    throw_error(ErrorKind::BadFlag,
                "TSCOPE_FLAGS: {}={}: cannot be created, its parent directory '{}' does not exist",
                flag, path, parent);
  }
}

void check_file_flag(std::string_view flag, const std::string& path) {
  try {
    check_output_path(path);
  } catch (const Error& error) {
    throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: {}={}: {}", flag, path, error.message());
  }
}
}  // namespace

void check_destination(const ProfileOptions& options) {
  if (!options.profile) return;
  if (options.destination != "stderr" && options.destination != "stdout") {
    check_file_flag("profiling.destination", options.destination);
  }
  if (!options.html.empty()) check_file_flag("profiling.html", options.html);
  if (!options.folded.empty()) check_file_flag("profiling.folded", options.folded);
  if (!options.trace.empty()) check_file_flag("profiling.trace", options.trace);
  if (!options.directory.empty()) check_directory_flag("profiling.directory", options.directory);
}

ProfileOptions parse_flags(std::string_view text) {
  ProfileOptions options;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t equals = item.find('=');
    const std::string_view name = trim(item.substr(0, equals));
    const auto it = setters().find(name);
    if (it == setters().end()) {
      throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: unknown flag '{}'; valid flags: {}", name,
                  valid_names());
    }
    if (equals == std::string_view::npos) {
      throw_error(ErrorKind::BadFlag, "TSCOPE_FLAGS: flag '{}' has no value; write {}=<value>",
                  name, name);
    }
    it->second(options, name, trim(item.substr(equals + 1)));
  }
  return options;
}

const ProfileOptions& process_flags() {
  // A function-local static: parsed once, thread-safe; a parse error propagates to the first
  // caller and is raised again by the next one.
  // Leaked, since exit and signal paths read it during static destruction.
  static const ProfileOptions& options = *new ProfileOptions([] {
    const char* text = std::getenv("TSCOPE_FLAGS");  // NOLINT(concurrency-mt-unsafe): read once
    ProfileOptions parsed =
        parse_flags(text == nullptr ? std::string_view() : std::string_view(text));
    check_destination(parsed);
    return parsed;
  }());
  return options;
}

}  // namespace tscope::profile

namespace tscope::profile {
namespace {
constexpr const char* kWorkerParentVariable = "TSCOPE_PROFILE_PARENT";

std::optional<WorkerParent> parse_worker_parent(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon + 1 >= text.size()) return std::nullopt;
  std::int64_t pid = 0;
  const std::string_view digits = text.substr(0, colon);
  const auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (status != std::errc() || end != digits.data() + digits.size() || pid <= 0) {
    return std::nullopt;
  }
  const std::string_view directory = text.substr(colon + 1);
  if (!directory.starts_with('/')) return std::nullopt;
  return WorkerParent{.pid = pid, .directory = std::string(directory)};
}
}  // namespace

const std::optional<WorkerParent>& inherited_worker_parent() {
  // Leaked, like process_flags(): the exit-time writer reads it.
  static const auto& parent = *new std::optional<WorkerParent>([]() -> std::optional<WorkerParent> {
    const char* text = std::getenv(kWorkerParentVariable);  // NOLINT(concurrency-mt-unsafe)
    if (text == nullptr) return std::nullopt;
    std::optional<WorkerParent> parsed = parse_worker_parent(text);
    if (!parsed) {
      const std::string line = std::string("tscope: ignoring ") + kWorkerParentVariable + "='" +
                               text + "': expected <pid>:<absolute directory>\n";
      write_all_to_fd(STDERR_FILENO, line);
    }
    return parsed;
  }());
  return parent;
}

void export_worker_parent(const WorkerParent& parent) {
  (void)inherited_worker_parent();
  const std::string value = std::to_string(parent.pid) + ":" + parent.directory;
  ::setenv(kWorkerParentVariable, value.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
}

}  // namespace tscope::profile
