// SPDX-License-Identifier: Apache-2.0
// A small user program with worker processes (docs/host_profiling.md, "Worker processes"), run
// with TSCOPE_FLAGS=profile=true by the integration tests before `tscope report DIR`. It forks
// three workers that run zones; the first ends with exit(), the second with end_worker_process,
// and the third is killed with SIGKILL once it has started, so the report lists it as missing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "tscope/profile/worker_processes.h"
#include "tscope/profile/zones.h"

namespace {

void load_item() { TSCOPE_ZONE("load item"); }

[[noreturn]] void run_worker(int worker, int ready_fd) {
  {
    TSCOPE_ZONE("worker loop");
    for (int i = 0; i < 10; ++i) load_item();
  }
  const char byte = 'r';
  if (::write(ready_fd, &byte, 1) != 1) ::_exit(2);
  if (worker == 0) std::exit(0);
  if (worker == 1) tscope::profile::end_worker_process(0);
  for (;;) ::pause();  // until killed
}

}  // namespace

int main() {
  {
    // The profiler starts with the first zone: before the workers are forked.
    TSCOPE_ZONE("setup");
  }
  int ready[2];
  if (::pipe(ready) != 0) return 2;
  pid_t workers[3];
  for (int w = 0; w < 3; ++w) {
    workers[w] = ::fork();
    if (workers[w] < 0) return 2;
    if (workers[w] == 0) run_worker(w, ready[1]);
  }
  for (int w = 0; w < 3; ++w) {
    char byte = 0;
    if (::read(ready[0], &byte, 1) != 1) return 2;
  }
  ::kill(workers[2], SIGKILL);
  for (pid_t worker : workers) {
    int status = 0;
    ::waitpid(worker, &status, 0);
  }
  {
    TSCOPE_ZONE("main loop");
    for (int i = 0; i < 5; ++i) load_item();
  }
  std::printf("workers %d %d %d\n", workers[0], workers[1], workers[2]);
  return 0;
}
