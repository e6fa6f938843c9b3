// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The one exception type of the library, with a kind the CLI maps to exit codes and a context
/// chain (outermost first) that names where the problem is: node, creation site, file, field.
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#pragma GCC visibility push(default)

namespace tscope {

enum class ErrorKind {
  InvalidArgument,   ///< a value the caller passed is not acceptable
  TypeMismatch,      ///< dtype or rank does not match what is required
  ShapeMismatch,     ///< dimensions disagree
  IndexOutOfRange,   ///< an index or axis lies outside its range
  Unsupported,       ///< valid request that Tensorscope does not implement
  NotDifferentiable, ///< grad() reached an op without a gradient
  BadFlag,           ///< TSCOPE_FLAGS or an option holds an unknown name or bad value
  Io,                ///< a file could not be read or written
  Parse,             ///< a file's contents are malformed: truncated, corrupt or inconsistent
  OutOfMemory,       ///< an allocation failed; the message gives the byte count
  Internal,          ///< a bug in Tensorscope
};

[[nodiscard]] std::string_view error_kind_name(ErrorKind kind) noexcept;

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message);

  [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// Context lines, outermost first.
  [[nodiscard]] const std::vector<std::string>& context() const noexcept { return context_; }
  /// Adds an outer context line ("while compiling function 'train'") and returns *this.
  Error& add_context(std::string line);
  [[nodiscard]] const char* what() const noexcept override;

 private:
  void rebuild_what();
  ErrorKind kind_;
  std::string message_;
  std::vector<std::string> context_;
  std::string what_;
};

/// Throws Error(kind, fmt::format(format, args...)).
template <class... Args>
[[noreturn]] void throw_error(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

namespace detail {
[[noreturn]] void throw_internal(const char* condition, const char* file, int line,
                                 std::string_view message);
}  // namespace detail

}  // namespace tscope

/// Always-on invariant check; failing means a bug in Tensorscope, never bad user input.
#define TSCOPE_CHECK(condition, message)                                                  \
  do {                                                                                    \
    if (!(condition)) ::tscope::detail::throw_internal(#condition, __FILE__, __LINE__, (message)); \
  } while (false)

#pragma GCC visibility pop
