// SPDX-License-Identifier: Apache-2.0
// Golden text reports recorded with a FakeClock: byte-identical to the files in expected/.
// Regenerate with TSCOPE_UPDATE_GOLDEN=1 after an intended layout change, and review the diff.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/test_util.h"
#include "tscope/profile/json_export.h"

namespace tscope {
namespace {

// A small training-like graph: dot, bias add, exp, a reduction, two functions sharing a profile.
profile::Profile golden_profile() {
  static FakeClock clock(1000);
  clock = FakeClock(1000);
  auto collector = std::make_shared<profile::ProfileCollector>();
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  Variable b = vector(DType::Float32, "b");
  Variable h = exp(dot(x, w) + b);
  Variable loss = sum(h);
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};  // golden rows of the unfused nodes
  options.profile = true;
  options.clock = &clock;
  options.collector = collector;
  options.name = "forward";
  Function forward = function({x, w, b}, {loss}, {}, options);
  options.name = "hidden";
  Function hidden = function({x, w, b}, {h * 2.0}, {}, options);
  const Tensor xv = Tensor::zeros(DType::Float32, {32, 64});
  const Tensor wv = Tensor::zeros(DType::Float32, {64, 16});
  const Tensor bv = Tensor::zeros(DType::Float32, {16});
  for (int i = 0; i < 3; ++i) (void)forward({xv, wv, bv});
  (void)hidden({xv, wv, bv});
  profile::Profile profile = collector->snapshot();
  // Process-wide figures vary from run to run; goldens zero them.
  profile.grad_ns = 0;
  profile.since_load_ns = 0;
  profile.blas = "TestBLAS 1.0 (2 threads)";
  profile.openmp = "2 threads, wait policy passive";
  return profile;
}

// Loop bodies are linked on first run with the steady clock; goldens zero their compile times.
void zero_body_compile_times(std::vector<profile::LoopRecord>& loops) {
  for (profile::LoopRecord& loop : loops) {
    loop.body.compile = profile::CompileRecord{.node_count = loop.body.compile.node_count};
    zero_body_compile_times(loop.body.loops);
  }
}

// A loop over the rows of a matrix whose step sums its row with a loop of its own.
profile::Profile nested_loop_profile() {
  static FakeClock clock(1000);
  clock = FakeClock(1000);
  Variable m = matrix(DType::Float32, "m");
  ScanResult rows = scan(
      [](const std::vector<Variable>& in) {
        ScanResult inner = scan(
            [](const std::vector<Variable>& row) {
              return std::vector<Variable>{row[1] + exp(row[0] - row[1])};
            },
            {in[0]}, {constant(Tensor::scalar(0.0, DType::Float32))}, {}, {.name = "row_sum"});
        return std::vector<Variable>{in[1] + subtensor(inner.outputs[0], {-1})};
      },
      {m}, {constant(Tensor::scalar(0.0, DType::Float32))}, {}, {.name = "rows"});
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  options.name = "nested";
  Function f = function({m}, {rows.outputs[0]}, {}, options);
  for (int i = 0; i < 2; ++i) (void)f({Tensor::zeros(DType::Float32, {3, 4})});
  profile::Profile profile = f.collector()->snapshot();
  zero_body_compile_times(profile.functions[0].loops);
  profile.grad_ns = 0;
  profile.since_load_ns = 0;
  profile.blas = "TestBLAS 1.0 (2 threads)";
  profile.openmp = "2 threads, wait policy passive";
  return profile;
}

std::string golden_path(const std::string& name) {
  return std::string(TSCOPE_GOLDEN_DIR) + "/" + name;
}

void expect_matches_golden(const std::string& name, const std::string& text) {
  const char* update = std::getenv("TSCOPE_UPDATE_GOLDEN");  // NOLINT(concurrency-mt-unsafe)
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path(name), std::ios::binary) << text;
    GTEST_SKIP() << "regenerated " << golden_path(name);
  }
  std::ifstream stream(golden_path(name), std::ios::binary);
  ASSERT_TRUE(stream) << "missing golden file " << golden_path(name)
                      << " (run with TSCOPE_UPDATE_GOLDEN=1 to create it)";
  std::stringstream expected;
  expected << stream.rdbuf();
  EXPECT_EQ(text, expected.str()) << "report differs from " << golden_path(name);
}

TEST(GoldenReport, DefaultSections) {
  expect_matches_golden("default_report.txt", profile::render_text(golden_profile()));
}

TEST(GoldenReport, MemoryIoAndDistribution) {
  profile::TextReportOptions options;
  options.show_io = true;
  options.show_memory = true;
  options.show_distribution = true;
  options.min_memory_size = 256;
  options.n_apply = 4;
  options.n_ops = 2;
  expect_matches_golden("memory_report.txt", profile::render_text(golden_profile(), options));
}

TEST(GoldenReport, NarrowLineWidthTruncatesNames) {
  profile::TextReportOptions options;
  options.line_width = 100;
  expect_matches_golden("narrow_report.txt", profile::render_text(golden_profile(), options));
}

TEST(GoldenReport, NestedLoopSections) {
  profile::TextReportOptions options;
  options.show_memory = true;
  expect_matches_golden("nested_loops_report.txt",
                        profile::render_text(nested_loop_profile(), options));
}

TEST(JsonRoundTrip, RendersByteForByte) {
  const profile::Profile original = golden_profile();
  profile::TextReportOptions options;
  options.show_memory = true;
  options.show_io = true;
  options.n_apply = 3;
  const std::string json = profile::to_json_text({original}, options);
  const profile::ProfileDocument document = profile::parse_profile_json(json, "memory");
  ASSERT_EQ(document.profiles.size(), 1u);
  EXPECT_EQ(document.report.n_apply, 3);
  EXPECT_TRUE(document.report.show_memory);
  EXPECT_EQ(profile::render_text(document.profiles[0], document.report),
            profile::render_text(original, options));
  // And the JSON itself is stable through a second round.
  EXPECT_EQ(profile::to_json_text(document.profiles, document.report), json);
}

TEST(JsonRoundTrip, KeepsTheRoofAndEachNodesBytes) {
  profile::Profile original = golden_profile();
  original.roof_bytes_per_second = 12.5e9;
  original.roof_flops_per_second = 48e9;
  original.functions[0].roof_bytes_per_second = 12.5e9;
  original.functions[0].nodes[0].bytes_per_call = 4096;
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::to_json_text({original}, {}), "roof");
  ASSERT_EQ(document.profiles.size(), 1u);
  const profile::Profile& read = document.profiles[0];
  EXPECT_EQ(read.roof_bytes_per_second, 12.5e9);
  EXPECT_EQ(read.roof_flops_per_second, 48e9);
  EXPECT_EQ(read.functions[0].roof_bytes_per_second, 12.5e9);
  EXPECT_EQ(read.functions[0].nodes[0].bytes_per_call, 4096);
  // A file without them (older writers) reads as "not measured".
  EXPECT_LT(profile::parse_profile_json(profile::to_json_text({golden_profile()}, {}), "old")
                .profiles[0]
                .roof_bytes_per_second,
            0);
}

TEST(JsonRoundTrip, KeepsEachNodesFusionRole) {
  const profile::Profile original = golden_profile();
  std::vector<std::string> roles;
  for (const profile::NodeRecord& node : original.functions[0].nodes) {
    roles.push_back(node.fusion_role);
  }
  // Recorded by the runtime: the Gemm joins no fused loop, exp can be a step of one (fusion is
  // excluded here, so it stayed a node) and the sum can end one.
  EXPECT_EQ(roles, (std::vector<std::string>{"none", "elementwise", "reduction"}));
  const std::string json = profile::to_json_text({original}, {});
  const profile::Profile read = profile::parse_profile_json(json, "roles").profiles[0];
  for (std::size_t i = 0; i < roles.size(); ++i) {
    EXPECT_EQ(read.functions[0].nodes[i].fusion_role, roles[i]) << "node " << i;
  }
  // A file written before the field existed reads as "not recorded".
  std::istringstream lines(json);
  std::string old_json;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"fusion_role\"") == std::string::npos) old_json += line + "\n";
  }
  ASSERT_NE(old_json.size(), json.size());
  const profile::Profile old = profile::parse_profile_json(old_json, "old").profiles[0];
  EXPECT_EQ(old.functions[0].nodes[1].fusion_role, "");
}

TEST(JsonRoundTrip, SeveralProfilesRenderWithTheirSum) {
  const profile::Profile one = golden_profile();
  const std::string json = profile::to_json_text({one, one}, {});
  const profile::ProfileDocument document = profile::parse_profile_json(json, "two");
  const std::string text = profile::render_profiles(document.profiles, document.report);
  EXPECT_EQ(text, profile::render_profiles({one, one}, {}));
  EXPECT_NE(text.find("Message: Sum of all(2) printed profiles at exit."), std::string::npos);
  // The sum holds every function of both: 2 x (3 + 1) calls.
  EXPECT_NE(text.find("Time in 8 calls to Function.__call__"), std::string::npos) << text;
}

TEST(JsonRoundTrip, BadDocumentsAreRejectedWithTheirName) {
  auto message = [](std::string_view text) {
    try {
      (void)profile::parse_profile_json(text, "bad.json");
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::Parse);
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{not json").find("'bad.json' is not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"format": "other"})").find("is not a tscope profile"), std::string::npos);
  EXPECT_NE(message(R"({"format": "tscope-profile", "schema_version": 99, "profiles": []})")
                .find("schema version 99"),
            std::string::npos);
  EXPECT_NE(message(R"({"format": "tscope-profile", "schema_version": 1, "profiles": 3})")
                .find("does not follow the profile schema"),
            std::string::npos);
  // Values of the wrong JSON type name the field (they used to escape as nlohmann exceptions).
  EXPECT_NE(message(R"({"format": 5})").find("is not a tscope profile"), std::string::npos);
  EXPECT_NE(message(R"({"format": "tscope-profile", "schema_version": "1"})")
                .find("\"schema_version\" must be an integer, not \"1\""),
            std::string::npos);
  EXPECT_NE(message(R"({"format": "tscope-profile", "schema_version": 1,
                        "profiles": [{"title": 7}]})")
                .find("/profiles/0/title"),
            std::string::npos);
  // Numbers that do not fit the integer field they land in (a cast of them is undefined).
  EXPECT_NE(message(R"({"format": "tscope-profile", "schema_version": 1,
                        "report": {"n_ops": 3.7e70}, "profiles": [{}]})")
                .find("(/report/n_ops) 3.7e+70 is not an int"),
            std::string::npos);
  EXPECT_NE(message(R"({"format": "tscope-profile", "schema_version": 1,
                        "profiles": [{"functions": [{"call_count": 1e300}]}]})")
                .find("(/profiles/0/functions/0/call_count) 1e+300 is not within the 64-bit range"),
            std::string::npos);
}

}  // namespace
}  // namespace tscope
