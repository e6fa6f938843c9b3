// SPDX-License-Identifier: Apache-2.0
// A child process running a profiled function is interrupted; the profile file it leaves must be
// complete and parseable, and the child must still die of the signal. Its own binary: the child
// starts the registry's watcher thread, which must not exist in the parent before fork().
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_util.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/json_export.h"

namespace tscope {
namespace {

[[noreturn]] void run_child_until_killed(const std::string& destination,
                                         const std::string& trace,
                                         int ready_fd) {
  alarm(30);  // never outlive a failed test
  auto collector = std::make_shared<profile::ProfileCollector>("interrupted job");
  profile::GlobalProfiles& registry = profile::GlobalProfiles::instance();
  profile::ProfileOptions options = registry.options();
  options.destination = destination;
  options.profile = true;
  options.trace = trace;
  registry.set_options(options);
  Variable x = vector(DType::Float32, "x");
  FunctionOptions function_options;
  function_options.profile = true;
  function_options.collector = collector;
  function_options.name = "loop";
  function_options.excluded_rewrites = {"fuse_elementwise"};  // two nodes, as checked below
  Function f = function({x}, {exp(x) * 2.0}, {}, function_options);
  registry.add(collector);
  const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {256})};
  (void)f(inputs);
  const char ready = 'r';
  if (::write(ready_fd, &ready, 1) != 1) ::_exit(3);
  for (;;) (void)f(inputs);
}

// With `trace`, also a timeline, written to the profile's path with ".trace.json" added.
void expect_profile_written_on(int signal_number, const std::string& name, bool trace = false) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tscope_signal_" + std::to_string(::getpid()) + name))
                               .string();
  const std::string trace_path = trace ? path + ".trace.json" : std::string();
  std::filesystem::remove(path);
  if (trace) std::filesystem::remove(trace_path);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    run_child_until_killed(path, trace_path, fds[1]);
  }
  ::close(fds[1]);
  char ready = 0;
  ASSERT_EQ(::read(fds[0], &ready, 1), 1) << "child did not start";
  ::close(fds[0]);
  ::usleep(20'000);  // let it run a few more calls
  ASSERT_EQ(::kill(child, signal_number), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with status " << status;
  EXPECT_EQ(WTERMSIG(status), signal_number);

  ASSERT_TRUE(std::filesystem::exists(path));
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::read_file(path), path);
  ASSERT_EQ(document.profiles.size(), 1u);
  const profile::Profile& written = document.profiles[0];
  EXPECT_EQ(written.title, "interrupted job");
  ASSERT_EQ(written.functions.size(), 1u);
  EXPECT_GE(written.functions[0].call_count, 1);
  ASSERT_EQ(written.functions[0].nodes.size(), 2u);
  EXPECT_GE(written.functions[0].nodes[0].call_count, written.functions[0].call_count);
  EXPECT_NE(profile::render_text(written, document.report).find("Message: interrupted job"),
            std::string::npos);
  if (trace) {
    // Complete JSON, with the calls and nodes of the interrupted loop, named in the profile.
    EXPECT_EQ(written.trace.path, trace_path);
    const nlohmann::json timeline = nlohmann::json::parse(profile::read_file(trace_path));
    std::int64_t calls = 0, nodes = 0;
    for (const nlohmann::json& event : timeline["traceEvents"]) {
      if (event["ph"] != "X") continue;
      (event["cat"] == "function" ? calls : nodes) += 1;
    }
    EXPECT_GE(calls, 1) << timeline["otherData"] << " nodes " << nodes;
    // Two nodes per call; once the ring has wrapped, its oldest call may have lost both (a call's
    // event follows its nodes').
    const bool wrapped = timeline["otherData"]["dropped_events"].get<std::int64_t>() > 0;
    EXPECT_GE(nodes, 2 * calls - (wrapped ? 2 : 0));
    EXPECT_EQ(timeline["otherData"]["recorded_events"].get<std::int64_t>(),
              written.trace.event_count);
    std::filesystem::remove(trace_path);
  }
  // No temporary file is left behind.
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << entry.path();
  }
  std::filesystem::remove(path);
}

TEST(ProfileOnSignal, SigintLeavesACompleteProfile) {
  expect_profile_written_on(SIGINT, "int.json");
}

TEST(ProfileOnSignal, SigtermLeavesACompleteProfile) {
  expect_profile_written_on(SIGTERM, "term.json");
}

TEST(ProfileOnSignal, SigintLeavesACompleteTimeline) {
  expect_profile_written_on(SIGINT, "trace.json", true);
}

}  // namespace
}  // namespace tscope
