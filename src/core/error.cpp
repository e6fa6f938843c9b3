// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/error.h"

namespace tscope {

std::string_view error_kind_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::TypeMismatch: return "TypeMismatch";
    case ErrorKind::ShapeMismatch: return "ShapeMismatch";
    case ErrorKind::IndexOutOfRange: return "IndexOutOfRange";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::NotDifferentiable: return "NotDifferentiable";
    case ErrorKind::BadFlag: return "BadFlag";
    case ErrorKind::Io: return "Io";
    case ErrorKind::Parse: return "Parse";
    case ErrorKind::OutOfMemory: return "OutOfMemory";
    case ErrorKind::Internal: return "Internal";
  }
  return "Unknown";
}

Error::Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {
  rebuild_what();
}

Error& Error::add_context(std::string line) {
  context_.insert(context_.begin(), std::move(line));
  rebuild_what();
  return *this;
}

const char* Error::what() const noexcept { return what_.c_str(); }

void Error::rebuild_what() {
  what_ = fmt::format("{}: {}", error_kind_name(kind_), message_);
  for (auto it = context_.rbegin(); it != context_.rend(); ++it) {
    what_ += "\n  ";
    what_ += *it;
  }
}

namespace detail {
void throw_internal(const char* condition, const char* file, int line, std::string_view message) {
  throw Error(ErrorKind::Internal, fmt::format("{} (check '{}' failed at {}:{}; this is a bug in "
                                               "tensorscope)",
                                               message, condition, file, line));
}
}  // namespace detail

}  // namespace tscope
