// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Which thread keeps a Function's execution frame between calls. An unprofiled Function lets each
/// thread keep the frame it used last, so a repeated call finds it with plain loads instead of an
/// atomic exchange (the one locked instruction a call would otherwise add). A frame whose thread
/// has exited is adopted by the next thread that needs one.
#include <atomic>

namespace tscope::runtime {

/// One per thread that has kept a frame; reference-counted by the thread and by each frame it
/// marks, so a frame can always read whether its owner is still alive.
struct ThreadMark {
  std::atomic<bool> alive{true};
  std::atomic<int> references{1};
};

namespace detail {
/// The calling thread's mark once made; a plain pointer, so reading it needs no thread-local
/// initialisation check on the call path.
extern constinit thread_local ThreadMark* current_thread_mark;
/// Makes the calling thread's mark (first call on the thread).
[[nodiscard]] ThreadMark* make_thread_mark();
}  // namespace detail

/// The calling thread's mark, made on first use; alive until the thread exits.
[[nodiscard]] inline ThreadMark* this_thread_mark() {
  ThreadMark* const mark = detail::current_thread_mark;
  return mark != nullptr ? mark : detail::make_thread_mark();
}

/// Adds a frame's reference to `mark`.
void retain(ThreadMark* mark) noexcept;
/// Drops one reference; the last one frees the mark. Null is ignored.
void release(ThreadMark* mark) noexcept;

}  // namespace tscope::runtime
