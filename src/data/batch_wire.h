// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a worker process sends its batches to the parent: one message per batch through a pipe,
// a fixed header then per tensor its dtype, shape and contiguous bytes. A failed batch is a
// message carrying the error's kind and text instead.
#include <cstdint>
#include <optional>
#include <string>

#include "tscope/core/error.h"
#include "tscope/data/loader.h"

namespace tscope::data {

/// One message: a batch, or the error that replaced it.
struct WireMessage {
  std::int64_t index = 0;
  std::int64_t busy_ns = 0;  ///< the worker's time making it
  Batch batch;
  bool failed = false;
  ErrorKind error_kind = ErrorKind::InvalidArgument;
  std::string error_text;
};

/// Writes the message whole; false when the reader has gone (EPIPE) or the write failed.
[[nodiscard]] bool write_message(int fd, const WireMessage& message);
/// Reads one message; nullopt at end of file before its first byte. Throws Error(Parse) for a
/// message cut short or malformed, naming `source`.
[[nodiscard]] std::optional<WireMessage> read_message(int fd, const std::string& source);

}  // namespace tscope::data
