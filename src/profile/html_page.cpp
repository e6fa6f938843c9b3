// SPDX-License-Identifier: Apache-2.0
// The shell shared by the HTML views. Charts are SVG written here, at generation time, rather
// than drawn by a script library in the browser: the file then needs no library to be embedded or
// kept up to date, renders the same in every browser (and with scripts off), and the page's one
// small script only sorts and filters tables. docs/viewing.md says more.
#include "tscope/profile/html_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace tscope::profile {
namespace {

// Classes rather than style attributes: the policy allows the one hashed style sheet only, and
// SVG presentation through classes falls under it.
constexpr std::string_view kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 16px 40px; color: #1d2330; }
h1 { font-size: 22px; margin: 20px 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d5d9e0; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
nav a { margin-right: 14px; }
p.note { color: #59606e; margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e6e8ec; text-align: right; vertical-align: top; }
th { background: #f3f5f8; position: sticky; top: 0; }
td.name, th.name { text-align: left; font-family: ui-monospace, monospace; word-break: break-all; }
td.text, th.text { text-align: left; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=descending]::after { content: " \25BE"; }
table.sortable th[aria-sort=ascending]::after { content: " \25B4"; }
tr.slower td { background: #fde8e6; }
tr.faster td { background: #e7f5ea; }
input[type=search] { font-size: 14px; padding: 4px 8px; width: 320px; }
span.count { margin-left: 10px; color: #59606e; }
ul.tips li { margin-bottom: 6px; }
.verdict-failed { color: #b3261e; font-weight: 600; }
.verdict-passed { color: #1e7b34; font-weight: 600; }
figure { margin: 8px 0 16px; }
figcaption { color: #59606e; font-size: 13px; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg.chart text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg.chart text.value { fill: #434a57; }
svg.chart text.frame { font-size: 11px; }
svg.chart line.axis { stroke: #8d94a1; stroke-width: 1; }
svg.chart line.grid { stroke: #e6e8ec; stroke-width: 1; }
svg.chart .c0 { fill: #4e79a7; } svg.chart .c1 { fill: #f28e2b; } svg.chart .c2 { fill: #59a14f; }
svg.chart .c3 { fill: #76b7b2; } svg.chart .c4 { fill: #e15759; } svg.chart .c5 { fill: #b07aa1; }
svg.chart .c6 { fill: #9c755f; } svg.chart .c7 { fill: #bab0ac; }
svg.chart .slower { fill: #e15759; } svg.chart .faster { fill: #59a14f; }
svg.chart polyline.live { fill: none; stroke: #4e79a7; stroke-width: 1.5; }
svg.chart polygon.live { fill: #4e79a7; fill-opacity: 0.15; }
svg.chart line.simulated { stroke: #e15759; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg.chart line.measured { stroke: #59a14f; stroke-width: 1.5; stroke-dasharray: 2 3; }
svg.chart rect.hover { fill: transparent; }
svg.chart rect.hover:hover { fill: #1d2330; fill-opacity: 0.08; }
svg.chart rect.frame { stroke: #ffffff; stroke-width: 0.5; }
svg.chart rect.frame:hover { fill-opacity: 0.75; }
)";

// Sorts and filters tables, and marks the page rendered (data-rendered="ok" on body) when every
// chart and table the generator wrote is in the document and nothing failed or was blocked, so
// that a test in a headless browser can tell a whole page from a broken one.
constexpr std::string_view kScript = R"(
(function () {
  'use strict';
  var problems = [];
  function note(problem) {
    problems.push(problem);
    if (document.body) {
      document.body.setAttribute('data-problems', problems.join('; '));
      document.body.setAttribute('data-rendered', 'failed');
    }
  }
  window.addEventListener('error', function (event) { note('error: ' + event.message); });
  document.addEventListener('securitypolicyviolation', function (event) {
    note('blocked by the policy: ' + event.violatedDirective + ' ' + event.blockedURI);
  });
  function sortKey(row, column) {
    var cell = row.cells[column];
    if (!cell) return '';
    var key = cell.getAttribute('data-sort');
    return key !== null ? parseFloat(key) : cell.textContent.toLowerCase();
  }
  function sortTable(table, column, header) {
    var body = table.tBodies[0];
    var descending = header.getAttribute('aria-sort') !== 'descending';
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortKey(a, column), y = sortKey(b, column);
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(header.parentNode.cells, function (cell) {
      cell.removeAttribute('aria-sort');
    });
    header.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  }
  function wireTables() {
    document.querySelectorAll('table.sortable').forEach(function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
        header.tabIndex = 0;
        header.addEventListener('click', function () { sortTable(table, column, header); });
        header.addEventListener('keydown', function (event) {
          if (event.key === 'Enter') sortTable(table, column, header);
        });
      });
    });
    document.querySelectorAll('input[data-filter]').forEach(function (input) {
      var table = document.getElementById(input.getAttribute('data-filter'));
      var count = document.getElementById(input.getAttribute('data-filter') + '-count');
      var rows = table.tBodies[0].rows;
      input.addEventListener('input', function () {
        var query = input.value.toLowerCase();
        var shown = 0;
        Array.prototype.forEach.call(rows, function (row) {
          var match = row.textContent.toLowerCase().indexOf(query) >= 0;
          row.hidden = !match;
          if (match) shown += 1;
        });
        count.textContent = shown + ' of ' + rows.length + ' rows';
      });
    });
  }
  document.addEventListener('DOMContentLoaded', function () {
    wireTables();
    var expected = parseInt(document.body.getAttribute('data-charts'), 10);
    var charts = document.querySelectorAll('svg.chart').length;
    var tables = document.querySelectorAll('table');
    var empty = Array.prototype.filter.call(tables, function (table) {
      return table.tBodies.length === 0 || table.tBodies[0].rows.length === 0;
    }).length;
    document.body.setAttribute('data-render-counts',
        charts + ' charts, ' + tables.length + ' tables, ' + empty + ' empty');
    if (charts !== expected) note(charts + ' charts of ' + expected);
    if (empty !== 0) note(empty + ' empty tables');
    if (problems.length === 0) document.body.setAttribute('data-rendered', 'ok');
    else note('page incomplete');
  });
})();
)";

std::uint32_t rotate_right(std::uint32_t value, int bits) {
  return (value >> bits) | (value << (32 - bits));
}

constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

void compress_block(std::array<std::uint32_t, 8>& state, const unsigned char* block) {
  std::array<std::uint32_t, 64> schedule{};
  for (int i = 0; i < 16; ++i) {
    schedule[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
                  (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotate_right(schedule[i - 15], 7) ^
                             rotate_right(schedule[i - 15], 18) ^ (schedule[i - 15] >> 3);
    const std::uint32_t s1 = rotate_right(schedule[i - 2], 17) ^ rotate_right(schedule[i - 2], 19) ^
                             (schedule[i - 2] >> 10);
    schedule[i] = schedule[i - 16] + s0 + schedule[i - 7] + s1;
  }
  std::array<std::uint32_t, 8> v = state;
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t s1 =
        rotate_right(v[4], 6) ^ rotate_right(v[4], 11) ^ rotate_right(v[4], 25);
    const std::uint32_t choose = (v[4] & v[5]) ^ (~v[4] & v[6]);
    const std::uint32_t t1 = v[7] + s1 + choose + kRoundConstants[i] + schedule[i];
    const std::uint32_t s0 =
        rotate_right(v[0], 2) ^ rotate_right(v[0], 13) ^ rotate_right(v[0], 22);
    const std::uint32_t majority = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
    const std::uint32_t t2 = s0 + majority;
    v = {t1 + t2, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
  }
  for (int i = 0; i < 8; ++i) state[i] += v[i];
}

std::string base64(const unsigned char* data, std::size_t size) {
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < size; i += 3) {
    const std::uint32_t chunk = (std::uint32_t{data[i]} << 16) |
                                (i + 1 < size ? std::uint32_t{data[i + 1]} << 8 : 0) |
                                (i + 2 < size ? std::uint32_t{data[i + 2]} : 0);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

// The colour class of a bar: known kernel implementations keep their colour across charts.
std::string category_class(const std::string& category) {
  constexpr std::array<std::string_view, 5> kKnown = {"blas", "dnnl", "simd", "cpu", "ref"};
  for (std::size_t i = 0; i < kKnown.size(); ++i) {
    if (category == kKnown[i]) return fmt::format("c{}", i);
  }
  if (category.find(',') != std::string::npos) return "c7";  // several implementations
  std::size_t hash = 0;
  for (char c : category) hash = hash * 31 + static_cast<unsigned char>(c);
  return fmt::format("c{}", 5 + hash % 2);
}

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string sha256_base64(std::string_view bytes) {
  std::array<std::uint32_t, 8> state = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string padded(bytes);
  const std::uint64_t bit_length = static_cast<std::uint64_t>(bytes.size()) * 8;
  padded += static_cast<char>(0x80);
  while (padded.size() % 64 != 56) padded += '\0';
  for (int shift = 56; shift >= 0; shift -= 8) {
    padded += static_cast<char>((bit_length >> shift) & 0xff);
  }
  const auto* data = reinterpret_cast<const unsigned char*>(padded.data());
  for (std::size_t offset = 0; offset < padded.size(); offset += 64) {
    compress_block(state, data + offset);
  }
  std::array<unsigned char, 32> digest{};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t k = 0; k < 4; ++k) {
      digest[4 * i + k] = static_cast<unsigned char>((state[i] >> (24 - 8 * k)) & 0xff);
    }
  }
  return base64(digest.data(), digest.size());
}

std::string html_content_security_policy() {
  return fmt::format(
      "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src 'none'; "
      "base-uri 'none'; form-action 'none'",
      sha256_base64(kStyle), sha256_base64(kScript));
}

std::string render_html_page(const HtmlPage& page) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
         escape_html(html_content_security_policy()) + "\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + escape_html(page.title) + "</title>\n";
  out += "<style>" + std::string(kStyle) + "</style>\n";
  out += "<script>" + std::string(kScript) + "</script>\n";
  out += "</head>\n";
  out += fmt::format("<body data-charts=\"{}\">\n", page.chart_count);
  out += page.body;
  out += "</body>\n</html>\n";
  return out;
}

std::string format_duration(double ns) {
  const double magnitude = std::fabs(ns);
  if (magnitude < 1e3) return fmt::format("{:.0f} ns", ns);
  if (magnitude < 1e6) return fmt::format("{:.1f} µs", ns / 1e3);
  if (magnitude < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

std::string format_bytes(double bytes) {
  const double magnitude = std::fabs(bytes);
  if (magnitude < 1024) return fmt::format("{:.0f} B", bytes);
  if (magnitude < 1024.0 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024);
  if (magnitude < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / 1024 / 1024);
  return fmt::format("{:.2f} GiB", bytes / 1024 / 1024 / 1024);
}

std::string shorten(std::string_view text, std::size_t max_chars) {
  // Code points, counted by their first byte: a UTF-8 continuation byte is 10xxxxxx.
  auto is_start = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  const auto chars = static_cast<std::size_t>(std::count_if(text.begin(), text.end(), is_start));
  if (chars <= max_chars || max_chars == 0) return std::string(text);
  std::size_t kept = 0, end = 0;
  for (; end < text.size(); ++end) {
    if (is_start(text[end]) && kept++ == max_chars - 1) break;
  }
  return std::string(text.substr(0, end)) + "…";
}

std::string svg_bar_chart(const std::vector<ChartBar>& bars, std::string_view caption) {
  constexpr int kWidth = 1100, kLabelRight = 390, kBarLeft = 400, kBarWidth = 560, kRowHeight = 20;
  constexpr int kTop = 6;
  double largest = 0;
  bool any_negative = false;
  for (const ChartBar& bar : bars) {
    largest = std::max(largest, std::fabs(bar.value));
    any_negative = any_negative || bar.value < 0;
  }
  const double axis_x = any_negative ? kBarLeft + kBarWidth / 2.0 : kBarLeft;
  const double scale = largest > 0 ? (any_negative ? kBarWidth / 2.0 : kBarWidth) / largest : 0;
  const int height = kTop + static_cast<int>(bars.size()) * kRowHeight + 6;
  std::string out = fmt::format(
      "<figure><svg class=\"chart\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>\n",
      kWidth, height, kWidth, height, escape_html(caption));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const ChartBar& bar = bars[i];
    const int y = kTop + static_cast<int>(i) * kRowHeight;
    const double length = std::fabs(bar.value) * scale;
    const double x = bar.value < 0 ? axis_x - length : axis_x;
    std::string label = shorten(bar.label, 42);
    if (!bar.category.empty()) label += " <" + bar.category + ">";
    const std::string tooltip =
        bar.tooltip.empty() ? bar.label + ": " + bar.value_text : bar.tooltip;
    const std::string fill =
        any_negative ? (bar.value > 0 ? "slower" : "faster") : category_class(bar.category);
    out += fmt::format(
        "<g><title>{}</title><rect class=\"hover\" x=\"0\" y=\"{}\" width=\"{}\" "
        "height=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
        "<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"/>"
        "<text class=\"value\" x=\"{}\" y=\"{}\">{}</text></g>\n",
        escape_html(tooltip), y, kWidth, kRowHeight, kLabelRight, y + 14, escape_html(label), fill,
        x, y + 3, std::max(length, 0.5), kRowHeight - 6, kBarLeft + kBarWidth + 8, y + 14,
        escape_html(bar.value_text));
  }
  out += fmt::format("<line class=\"axis\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>\n",
                     axis_x, kTop - 2, axis_x, height - 4);
  out += "</svg><figcaption>" + escape_html(caption) + "</figcaption></figure>\n";
  return out;
}

}  // namespace tscope::profile
