// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Building blocks of the HTML views (report_html.h, the HTML diff): escaping, the page shell with
/// its Content-Security-Policy, and charts drawn as inline SVG when the page is generated.
///
/// A page is one self-contained file: its one style sheet and one script are inline and allowed
/// by their SHA-256 hashes in the page's policy (`default-src 'none'`), so the browser loads
/// nothing else and runs nothing else, from file:// or from a server.
///
///   HtmlPage page{.title = "Profile", .body = "<p>" + escape_html(name) + "</p>"};
///   std::string text = render_html_page(page);
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(default)

namespace tscope::profile {

/// `text` with &, <, >, " and ' replaced by character references: safe in element content and
/// in quoted attribute values.
[[nodiscard]] std::string escape_html(std::string_view text);

/// SHA-256 of `bytes` (FIPS 180-4), base64-encoded: the form a CSP hash source takes.
[[nodiscard]] std::string sha256_base64(std::string_view bytes);

struct HtmlPage {
  std::string title;  ///< plain text; escaped by render_html_page
  std::string body;   ///< HTML, already escaped by whoever built it
  /// Number of `<svg class="chart">` elements the body holds: the page script marks the page
  /// rendered (`data-rendered="ok"` on body) only when it finds them all and every table has rows.
  int chart_count = 0;
};

/// The whole document: doctype, charset, the policy, the shared style sheet and script, `body`.
[[nodiscard]] std::string render_html_page(const HtmlPage& page);

/// The policy render_html_page writes: no source allowed but the page's own style and script,
/// named by hash.
[[nodiscard]] std::string html_content_security_policy();

/// One bar of svg_bar_chart.
struct ChartBar {
  std::string label;       ///< plain text, shortened on the chart, whole in the tooltip
  std::string category;    ///< picks the colour ("blas", "dnnl", ...) and is shown as <category>
  double value = 0;        ///< bar length; bars of negative value extend left of the axis
  std::string value_text;  ///< printed after the bar
  std::string tooltip;     ///< plain text; the label and value_text when empty
};

/// A horizontal bar chart, one row per bar in the given order, as an `<svg class="chart">`.
/// With any negative value the axis sits in the middle (a change chart).
[[nodiscard]] std::string svg_bar_chart(const std::vector<ChartBar>& bars,
                                        std::string_view caption);

/// "1.234 s", "12.3 ms", "45.6 µs", "789 ns".
[[nodiscard]] std::string format_duration(double ns);
/// "1.5 GiB", "12.0 MiB", "3.0 KiB", "512 B".
[[nodiscard]] std::string format_bytes(double bytes);
/// `text` cut to at most `max_chars` characters (code points), with "…" when cut.
[[nodiscard]] std::string shorten(std::string_view text, std::size_t max_chars);

}  // namespace tscope::profile

#pragma GCC visibility pop
