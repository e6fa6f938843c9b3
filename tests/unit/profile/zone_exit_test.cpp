// SPDX-License-Identifier: Apache-2.0
// A process with profile=true in TSCOPE_FLAGS that runs zones and no graph function writes its
// zones at exit, including those of a thread that ended before. Its own binary: the child reads
// the flags for the first time after fork(), which must not have happened in the parent.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "support/test_util.h"
#include "tscope/core/file_io.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/zones.h"

namespace tscope {
namespace {

void load_item() { TSCOPE_ZONE("load item"); }

[[noreturn]] void run_child(const std::string& destination) {
  alarm(30);  // never outlive a failed test
  const std::string flags = "profile=true,profiling.destination=" + destination;
  ::setenv("TSCOPE_FLAGS", flags.c_str(), 1);
  std::thread([] {
    for (int i = 0; i < 5; ++i) load_item();
  }).join();
  {
    TSCOPE_ZONE("main loop");
    for (int i = 0; i < 3; ++i) load_item();
  }
  std::exit(0);
}

// Forks a child that runs `child(destination)` and exits; returns the profile it wrote at exit.
profile::ProfileDocument profile_written_by_child(void (*child)(const std::string&),
                                                  const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            (name + "_" + std::to_string(::getpid()) + ".json"))
                               .string();
  std::filesystem::remove(path);
  const pid_t pid = ::fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) child(path);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  profile::ProfileDocument document = profile::parse_profile_json(read_file_bytes(path), path);
  std::filesystem::remove(path);
  return document;
}

TEST(ZoneExit, ZonesOnlyProcessWritesItsZonesAtExit) {
  const profile::ProfileDocument document =
      profile_written_by_child(run_child, "tscope_zone_exit");
  ASSERT_EQ(document.profiles.size(), 1U);
  const profile::Profile& written = document.profiles[0];
  EXPECT_EQ(written.title, "Host zones");
  EXPECT_TRUE(written.functions.empty());
  ASSERT_EQ(written.host.threads.size(), 2U);
  EXPECT_TRUE(written.host.threads[0].exited);
  // The main thread ends with the process: named, and not reported as exited early.
  EXPECT_EQ(written.host.threads[1].name, "main");
  EXPECT_FALSE(written.host.threads[1].exited);
  EXPECT_GT(written.host.zone_overhead_ns, 0);
  const profile::ZoneThreadRecord merged = profile::merge_zone_threads(written.host);
  std::int64_t load_calls = 0;
  for (const profile::ZoneTotals& totals : profile::zone_totals(merged)) {
    if (written.host.sites[static_cast<std::size_t>(totals.site)].name == "load item") {
      load_calls = totals.call_count;
    }
  }
  EXPECT_EQ(load_calls, 8);
  const std::string text = profile::render_profiles(document.profiles, document.report);
  EXPECT_TRUE(text.starts_with("Host zones\n")) << text;
}

[[noreturn]] void run_graph_only_child(const std::string& destination) {
  alarm(30);
  const std::string flags = "profile=true,profiling.destination=" + destination;
  ::setenv("TSCOPE_FLAGS", flags.c_str(), 1);
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.name = "step";
  Function step = function({x}, {x * 2.0}, {}, options);
  const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {4})};
  for (int i = 0; i < 3; ++i) (void)step(inputs);
  std::exit(0);
}

TEST(ZoneExit, GraphCallsAloneAddNoZonesSection) {
  const profile::ProfileDocument document =
      profile_written_by_child(run_graph_only_child, "tscope_zone_exit_graph");
  ASSERT_EQ(document.profiles.size(), 1U);
  EXPECT_EQ(document.profiles[0].functions.at(0).call_count, 3);
  EXPECT_TRUE(document.profiles[0].host.empty());
}

}  // namespace
}  // namespace tscope
