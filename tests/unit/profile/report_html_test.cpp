// SPDX-License-Identifier: Apache-2.0
// The HTML views over profiles built in code: escaping of every name, the page's policy naming
// its own style and script by hash, the sections present, and the chart count the page script
// checks in the browser.
#include "tscope/profile/report_html.h"

#include <regex>

#include "support/test_util.h"
#include "tscope/profile/html_page.h"
#include "tscope/profile/profile_diff.h"
#include "tscope/profile/report_diff.h"

namespace tscope {
namespace {

using profile::FunctionRecord;
using profile::NodeRecord;
using profile::Profile;

constexpr const char* kHostileName = "<script>alert(\"x\")</script> & 'q'";
constexpr const char* kEscapedName =
    "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;";

NodeRecord make_node(std::string apply_name,
                     std::string class_name,
                     std::int64_t total_ns,
                     std::int64_t topo_index,
                     std::int64_t output_floats) {
  NodeRecord node;
  node.apply_name = std::move(apply_name);
  node.op_name = node.apply_name.substr(0, node.apply_name.find('('));
  node.class_name = std::move(class_name);
  node.impl = "cpu";
  node.call_count = 4;
  node.total_ns = total_ns;
  node.min_ns = total_ns / 8;
  node.max_ns = total_ns / 2;
  node.topo_index = topo_index;
  node.input_ids = {topo_index};
  node.output_ids = {topo_index + 1};
  node.outputs = {{.dtype = "float32", .shape = {output_floats}}};
  node.output_alias = {"c"};
  node.output_alias_input = {-1};
  return node;
}

Profile make_profile(const std::string& hostile) {
  FunctionRecord function;
  function.name = "train " + hostile;
  function.call_count = 4;
  function.call_ns = 1'000'000;
  function.vm_ns = 900'000;
  function.input_ids = {0};
  function.output_ids = {3};
  function.measured_peak_bytes = 6000;
  function.nodes = {make_node("Dot(x, w)", "Dot", 600'000, 0, 1000),
                    make_node(hostile + "(a)", hostile, 300'000, 1, 250),
                    make_node("Exp(b)", "Elemwise", 50'000, 2, 250)};
  function.nodes[1].user_op = hostile;
  Profile profile;
  profile.functions = {function};
  profile.blas = "BLAS " + hostile;
  return profile;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t found = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++found;
  }
  return found;
}

// The text between the first `open` and the next `close`.
std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const std::size_t start = text.find(open);
  EXPECT_NE(start, std::string::npos) << open;
  const std::size_t end = text.find(close, start + open.size());
  EXPECT_NE(end, std::string::npos) << close;
  return text.substr(start + open.size(), end - start - open.size());
}

TEST(HtmlPage, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(profile::sha256_base64(""), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  EXPECT_EQ(profile::sha256_base64("abc"), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
  EXPECT_EQ(profile::sha256_base64("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "JI1qYdIGOLjlwCaTDD5gOaM85Flk/yFn9uzt1BnbBsE=");
  EXPECT_EQ(profile::sha256_base64(std::string(1000, 'a')),
            "Qe3s5C1j6Nm/UVqbppMuHCDLyfWl0TRkWttdsblzfqM=");
}

TEST(HtmlPage, EscapeReplacesEveryMarkupCharacter) {
  EXPECT_EQ(profile::escape_html(kHostileName), kEscapedName);
  EXPECT_EQ(profile::escape_html("plain {x, y}"), "plain {x, y}");
}

TEST(HtmlPage, ShortenCutsCodePointsNotBytes) {
  EXPECT_EQ(profile::shorten("abcdef", 6), "abcdef");
  EXPECT_EQ(profile::shorten("abcdefg", 6), "abcde…");
  EXPECT_EQ(profile::shorten("µµµµµµµ", 3), "µµ…");
}

TEST(HtmlPage, PolicyAllowsOnlyThePagesOwnStyleAndScript) {
  const std::string page = profile::render_html_page({.title = "t", .body = "<p>b</p>\n"});
  const std::string policy = profile::html_content_security_policy();
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(policy.find("unsafe"), std::string::npos);
  EXPECT_NE(page.find("content=\"" + profile::escape_html(policy) + "\""), std::string::npos);
  const std::string style = between(page, "<style>", "</style>");
  const std::string script = between(page, "<script>", "</script>");
  EXPECT_NE(policy.find("style-src 'sha256-" + profile::sha256_base64(style) + "'"),
            std::string::npos);
  EXPECT_NE(policy.find("script-src 'sha256-" + profile::sha256_base64(script) + "'"),
            std::string::npos);
  // The policy must come before anything it governs.
  EXPECT_LT(page.find("Content-Security-Policy"), page.find("<style>"));
  EXPECT_EQ(count(page, "<script"), 1U);
  EXPECT_EQ(count(page, "://"), 0U);  // no address at all: charts would add the SVG namespace
}

TEST(HtmlReport, EscapesEveryNameFromTheProfile) {
  const std::string page = profile::render_html(make_profile(kHostileName), {.source = "<p>.json"});
  EXPECT_EQ(page.find(kHostileName), std::string::npos);
  EXPECT_GT(count(page, kEscapedName), 4U);  // function, class bar, apply row, user op, BLAS
  EXPECT_EQ(count(page, "<script"), 1U);
  EXPECT_NE(page.find("&lt;p&gt;.json"), std::string::npos);
  EXPECT_EQ(page.find("<p>.json"), std::string::npos);
}

TEST(HtmlReport, HoldsEverySectionAndCountsItsCharts) {
  const std::string page = profile::render_html(make_profile("Softmax"));
  for (const char* id : {"functions", "classes", "ops", "apply", "memory", "tips", "flame"}) {
    EXPECT_NE(page.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
  }
  // Class and Ops charts, one live-bytes chart, the flame graph.
  EXPECT_NE(page.find("<body data-charts=\"4\">"), std::string::npos);
  EXPECT_EQ(count(page, "<svg class=\"chart\""), 4U);
  EXPECT_NE(page.find("Dot &lt;cpu&gt;"), std::string::npos);  // the impl next to the class
  // Dot's 4000 B output lives until the second node's 1000 B output is written.
  EXPECT_NE(page.find("simulated peak 4.9 KiB"), std::string::npos);
  EXPECT_NE(page.find("measured peak (allocator) 5.9 KiB"), std::string::npos);
  // The Apply table: every node, costliest first, raw values kept for sorting.
  const std::string table =
      between(page, "<table class=\"sortable\" id=\"apply-table\">", "</table>");
  EXPECT_EQ(count(table, "<tr>"), 4U);  // header and three nodes
  EXPECT_LT(table.find("Dot(x, w)"), table.find("Softmax(a)"));
  EXPECT_LT(table.find("Softmax(a)"), table.find("Exp(b)"));
  EXPECT_NE(table.find("<td data-sort=\"600000\">600.0 µs</td>"), std::string::npos);
  EXPECT_NE(page.find("data-filter=\"apply-table\""), std::string::npos);
}

TEST(HtmlReport, ZonesOnlyProfileShowsTheFlameGraph) {
  Profile profile;
  profile.host.sites = {{.name = "load <batch>", .file = "train.cpp", .line = 3, .kind = "zone"}};
  profile.host.threads = {
      {.nodes = {{.site = 0, .parent = -1, .call_count = 2, .total_ns = 5000, .self_ns = 5000}}}};
  const std::string page = profile::render_html(profile);
  EXPECT_NE(page.find("<section id=\"flame\">"), std::string::npos);
  EXPECT_EQ(page.find("<section id=\"apply\">"), std::string::npos);
  EXPECT_NE(page.find("load &lt;batch&gt;"), std::string::npos);
  EXPECT_NE(page.find("<body data-charts=\"1\">"), std::string::npos);
}

TEST(HtmlDiff, ShowsEveryTableEscapedWithTheChangeCharts) {
  Profile before = make_profile(kHostileName);
  Profile after = before;
  after.functions[0].nodes[0].total_ns *= 3;
  after.functions[0].nodes[0].min_ns *= 3;
  after.functions[0].nodes[0].max_ns *= 3;
  after.functions[0].nodes.pop_back();  // Exp vanished
  const profile::ProfileDiff diff =
      profile::diff_profiles(before, after, {}, "before<1>.json", "after&.json");
  const std::string page = profile::render_diff_html(diff);
  EXPECT_EQ(page.find(kHostileName), std::string::npos);
  EXPECT_NE(page.find(kEscapedName), std::string::npos);
  EXPECT_NE(page.find("before&lt;1&gt;.json"), std::string::npos);
  EXPECT_NE(page.find("after&amp;.json"), std::string::npos);
  for (const char* id : {"functions", "memory", "classes", "ops", "apply"}) {
    EXPECT_NE(page.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
  }
  EXPECT_NE(page.find("<body data-charts=\"3\">"), std::string::npos);
  EXPECT_EQ(count(page, "<svg class=\"chart\""), 3U);
  EXPECT_NE(page.find("<tr class=\"slower\"><td class=\"name\">Dot(x, w)</td>"), std::string::npos);
  EXPECT_NE(page.find("Vanished (only in before): 1"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"verdict-failed\">slower</span>"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 1U);
}

}  // namespace
}  // namespace tscope
