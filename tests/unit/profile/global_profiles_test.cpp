// SPDX-License-Identifier: Apache-2.0
// The process-wide profile list: costliest first, the sum of several, shared-profile
// accumulation, file and JSON destinations written atomically.
#include "tscope/profile/global_profiles.h"

#include <unistd.h>

#include <filesystem>

#include "support/test_util.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/json_export.h"

namespace tscope {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tscope_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct Job {
  std::shared_ptr<profile::ProfileCollector> collector =
      std::make_shared<profile::ProfileCollector>();
  std::vector<Function> functions;
};

// `function_count` functions sharing one collector, each called `calls` times.
Job make_job(FakeClock& clock, const std::string& name, int function_count, int calls) {
  Job job;
  Variable x = vector(DType::Float32, "x");
  for (int i = 0; i < function_count; ++i) {
    FunctionOptions options;
    options.excluded_rewrites = {"fuse_elementwise"};  // the reports count two nodes
    options.profile = true;
    options.clock = &clock;
    options.collector = job.collector;
    options.name = name + std::to_string(i);
    job.functions.push_back(function({x}, {exp(x) * 2.0}, {}, options));
    for (int call = 0; call < calls; ++call)
      (void)job.functions.back()({Tensor::zeros(DType::Float32, {8})});
  }
  return job;
}

TEST(GlobalProfiles, SharedCollectorAccumulatesFunctions) {
  FakeClock clock(1000);
  Job job = make_job(clock, "shared", 2, 3);
  const profile::Profile profile = job.collector->snapshot();
  ASSERT_EQ(profile.functions.size(), 2u);
  const std::string text = profile::render_text(profile);
  EXPECT_NE(text.find("Message: shared0, shared1"), std::string::npos) << text;
  EXPECT_NE(text.find("Time in 6 calls to Function.__call__"), std::string::npos) << text;
  // One Elemwise class row holding the 4 nodes of both functions, 12 calls.
  EXPECT_NE(text.find("     12        4   Elemwise"), std::string::npos) << text;
}

TEST(GlobalProfiles, RetiredFunctionKeepsItsRecord) {
  FakeClock clock(1000);
  Job job = make_job(clock, "gone", 1, 2);
  job.functions.clear();  // destroyed: the collector keeps the final record
  const profile::Profile profile = job.collector->snapshot();
  ASSERT_EQ(profile.functions.size(), 1u);
  EXPECT_EQ(profile.functions[0].call_count, 2);
}

TEST(GlobalProfiles, WritesCostliestFirstThenTheSumToAFile) {
  FakeClock clock(1000);
  Job cheap = make_job(clock, "cheap", 1, 1);
  Job costly = make_job(clock, "costly", 1, 5);
  Job idle = make_job(clock, "idle", 1, 0);
  profile::GlobalProfiles& registry = profile::GlobalProfiles::instance();
  profile::ProfileOptions options = registry.options();
  options.destination = temp_path("profiles.txt");
  registry.set_options(options);
  registry.add(cheap.collector);
  registry.add(costly.collector);
  registry.add(idle.collector);
  registry.add(costly.collector);  // registering twice keeps one entry
  registry.write();
  const std::string text = profile::read_file(options.destination);
  const std::size_t costly_at = text.find("Message: costly0");
  const std::size_t cheap_at = text.find("Message: cheap0");
  const std::size_t sum_at = text.find("Message: Sum of all(2) printed profiles at exit.");
  ASSERT_NE(costly_at, std::string::npos) << text;
  ASSERT_NE(cheap_at, std::string::npos) << text;
  ASSERT_NE(sum_at, std::string::npos) << text;
  EXPECT_LT(costly_at, cheap_at);
  EXPECT_LT(cheap_at, sum_at);
  EXPECT_EQ(text.find("idle0"), std::string::npos) << "a profile that never ran is not printed";
  EXPECT_NE(text.find("Time in 6 calls to Function.__call__", sum_at), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(options.destination + ".tmp." + std::to_string(::getpid())));

  // A .json destination receives the JSON export of the same profiles.
  options.destination = temp_path("profiles.json");
  registry.set_options(options);
  registry.write();
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::read_file(options.destination), options.destination);
  ASSERT_EQ(document.profiles.size(), 2u);
  EXPECT_EQ(document.profiles[0].functions[0].name, "costly0");
  // The same report, but for the time since load, which advanced between the two writes.
  auto without_load_time = [](std::string report) {
    for (std::size_t at = report.find("Time since tscope load"); at != std::string::npos;
         at = report.find("Time since tscope load", at + 1)) {
      report.erase(at, report.find('\n', at) - at);
    }
    return report;
  };
  EXPECT_EQ(without_load_time(profile::render_profiles(document.profiles, document.report)),
            without_load_time(text));
  std::filesystem::remove(temp_path("profiles.txt"));
  std::filesystem::remove(temp_path("profiles.json"));

  // An unwritable destination is an Io error naming the path.
  options.destination = "/nonexistent_dir_for_tscope/p.txt";
  registry.set_options(options);
  try {
    registry.write();
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(error.what()).find("/nonexistent_dir_for_tscope/p.txt"),
              std::string::npos);
  }
  // Leave the registry quiet for process exit.
  registry.clear();
}

TEST(GlobalProfiles, WritesTheViewsOfTheProfilesSum) {
  FakeClock clock(1000);
  Job cheap = make_job(clock, "cheap", 1, 1);
  Job costly = make_job(clock, "costly", 1, 5);
  profile::GlobalProfiles& registry = profile::GlobalProfiles::instance();
  const profile::ProfileOptions saved = registry.options();
  profile::ProfileOptions options = saved;
  options.destination = temp_path("views.txt");
  options.html = temp_path("views.html");
  options.folded = temp_path("views.folded");
  registry.set_options(options);
  registry.add(cheap.collector);
  registry.add(costly.collector);
  registry.write();
  const std::string html = profile::read_file(options.html);
  EXPECT_NE(html.find("Sum of all(2) printed profiles at exit."), std::string::npos);
  EXPECT_NE(html.find("costly0"), std::string::npos);
  EXPECT_NE(html.find("cheap0"), std::string::npos);
  const std::string folded = profile::read_file(options.folded);
  // Both functions' nodes, in the text report's order: costliest first.
  ASSERT_NE(folded.find("costly0;Elemwise;"), std::string::npos) << folded;
  EXPECT_LT(folded.find("costly0;Elemwise;"), folded.find("cheap0;Elemwise;")) << folded;
  for (const std::string& path : {options.destination, options.html, options.folded}) {
    std::filesystem::remove(path);
  }
  registry.set_options(saved);
  registry.clear();
}

TEST(GlobalProfiles, MinPeakFlagSearchesBeforeWriting) {
  FakeClock clock(1000);
  Job job = make_job(clock, "searched", 1, 1);
  profile::GlobalProfiles& registry = profile::GlobalProfiles::instance();
  const profile::ProfileOptions saved = registry.options();
  profile::ProfileOptions options = profile::parse_flags(
      "profile_memory=true,profiling.min_peak_memory=true,profiling.destination=" +
      temp_path("min_peak.json"));
  registry.set_options(options);
  registry.add(job.collector);
  registry.write();
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::read_file(options.destination), options.destination);
  ASSERT_EQ(document.profiles.size(), 1u);
  const profile::MinPeakRecord& min_peak = document.profiles[0].functions[0].min_peak;
  EXPECT_TRUE(min_peak.searched);
  EXPECT_TRUE(min_peak.exact);
  EXPECT_EQ(min_peak.peak_bytes, 8 * 4);  // the double is written over exp(x)
  EXPECT_NE(profile::render_text(document.profiles[0], document.report)
                .find("Minimum peak from all valid apply node order is 0KB"),
            std::string::npos);
  std::filesystem::remove(options.destination);
  registry.clear();
  registry.set_options(saved);
}

TEST(AtomicFile, ReplacesTheWholeFile) {
  const std::string path = temp_path("atomic.txt");
  profile::write_file_atomically(path, "a long first version\n");
  profile::write_file_atomically(path, "second\n");
  EXPECT_EQ(profile::read_file(path), "second\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tscope
