// SPDX-License-Identifier: Apache-2.0
#include "thread_mark.h"

namespace tscope::runtime {
namespace detail {
constinit thread_local ThreadMark* current_thread_mark = nullptr;
}  // namespace detail

namespace {

// Set when the thread's holder has been destroyed (thread exit): a call made later on the same
// thread, from another thread-local destructor, gets a mark that is never released (its frames
// stay kept).
constinit thread_local bool holder_destroyed = false;

// Gives up the thread's own reference to its mark at thread exit: after that, the frames this
// thread kept are free for others.
class ThreadMarkHolder {
 public:
  ThreadMarkHolder() = default;
  ThreadMarkHolder(const ThreadMarkHolder&) = delete;
  ThreadMarkHolder& operator=(const ThreadMarkHolder&) = delete;
  ~ThreadMarkHolder() {
    holder_destroyed = true;
    ThreadMark* const mark = detail::current_thread_mark;
    detail::current_thread_mark = nullptr;
    if (mark == nullptr) return;
    // Release: the thread's last writes to its frames happen before an adopter sees it dead.
    mark->alive.store(false, std::memory_order_release);
    release(mark);
  }
};

}  // namespace

namespace detail {
ThreadMark* make_thread_mark() {
  auto* mark = new ThreadMark();
  current_thread_mark = mark;
  if (!holder_destroyed) {
    // Constructed here, on the thread's first call, and destroyed when the thread exits.
    thread_local ThreadMarkHolder holder;
  }
  return mark;
}
}  // namespace detail

void retain(ThreadMark* mark) noexcept { mark->references.fetch_add(1, std::memory_order_relaxed); }

void release(ThreadMark* mark) noexcept {
  if (mark != nullptr && mark->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete mark;
}

}  // namespace tscope::runtime
