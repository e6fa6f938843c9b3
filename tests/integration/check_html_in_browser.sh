#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Opens the HTML views in Debian's headless Chromium, as a user opens them from disk: the report
# of a real run with its timeline (`tscope profile --json --trace` then `tscope report --html
# --trace`) and the diff of that run with
# one compiled without elementwise fusion (`tscope diff --html`). A page passes when Chromium
# printed no console message (a script error, a Content-Security-Policy violation, a failed load),
# the page's own script marked it rendered (data-rendered="ok": every chart and table it was
# written with is in the document and nothing was blocked), the DOM holds the expected charts and
# table rows, and a screenshot was saved. The proxy points at a closed port and host names resolve
# nowhere, so a request that escaped the policy would fail and be logged. Last, a copy of the
# report with an external image must fail, so that a checker gone blind cannot pass.
# Usage: check_html_in_browser.sh TSCOPE OUT_DIR   (screenshots and pages are left in OUT_DIR)
set -euo pipefail
tscope="$1" out="$2"
browser="${CHROMIUM:-chromium}"
if ! command -v "$browser" > /dev/null; then
  echo "no '$browser' on PATH: scripts/bootstrap installs Debian's chromium package"
  exit 1
fi
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

"$tscope" profile --model mlp --steps 3 --batch 16 --json "$out/before.json" \
  --trace "$out/before.trace.json" > /dev/null
"$tscope" profile --model mlp --steps 3 --batch 16 --exclude-rewrite fuse_elementwise \
  --json "$out/after.json" > /dev/null
"$tscope" report --html "$out/report.html" --trace "$out/before.trace.json" "$out/before.json"
"$tscope" diff "$out/before.json" "$out/after.json" --html "$out/diff.html" > /dev/null

# Loads one page; leaves its DOM in $scratch/NAME.dom and Chromium's log in $scratch/NAME.log.
load() {
  local name="$1" page="$2"
  local status=0
  # --no-sandbox: CI runs tests as root, where Chromium's sandbox cannot start.
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$scratch/browser-$name" --disable-extensions --disable-sync \
    --disable-background-networking --disable-component-update \
    --proxy-server=127.0.0.1:9 --host-resolver-rules='MAP * ~NOTFOUND' \
    --hide-scrollbars --window-size=1200,1600 --screenshot="$out/$name.png" \
    --enable-logging=stderr --v=0 --dump-dom "file://$page" \
    > "$scratch/$name.dom" 2> "$scratch/$name.log" || status=$?
  if [[ $status -ne 0 ]]; then
    echo "$name: chromium exited with $status"
    tail -n 20 "$scratch/$name.log"
    return 1
  fi
}

# Prints why the page failed, if it did; returns non-zero then.
problems() {
  local name="$1" minimum_charts="$2" minimum_rows="$3"
  local dom="$scratch/$name.dom" failed=0
  if grep -E ':CONSOLE|Content Security Policy|Refused to' "$scratch/$name.log"; then
    echo "$name: the browser logged the messages above"
    failed=1
  fi
  local body
  body=$(grep -o '<body[^>]*>' "$dom" || true)
  if [[ "$body" != *'data-rendered="ok"'* ]]; then
    echo "$name: the page did not mark itself rendered: $body"
    failed=1
  fi
  local charts rows
  charts=$({ grep -o '<svg class="chart"' "$dom" || true; } | wc -l)
  rows=$({ sed -n '/id="apply-table"/,/<\/table>/p' "$dom" | grep -o '<tr' || true; } | wc -l)
  if ((charts < minimum_charts || rows < minimum_rows)); then
    echo "$name: $charts charts (want >= $minimum_charts), $rows Apply rows (want >= $minimum_rows)"
    failed=1
  fi
  if [[ ! -s "$out/$name.png" ]]; then
    echo "$name: no screenshot"
    failed=1
  fi
  return $failed
}

# The report: Class and Ops charts, a live-bytes chart, the flame graph; the MLP's nodes; and the
# timeline the run recorded, with its slices drawn.
load report "$out/report.html"
problems report 4 10
slices=$({ sed -n '/<section id="timeline"/,/<\/section>/p' "$scratch/report.dom" |
           grep -o '<rect class="frame' || true; } | wc -l)
if ((slices < 10)); then
  echo "report: the timeline drew $slices slices (want >= 10)"
  exit 1
fi
# The diff: a change chart for each of Class, Ops and Apply.
load diff "$out/diff.html"
problems diff 3 10

sed 's|<body data-charts|<img src="http://example.invalid/x.png"><body data-charts|' \
  "$out/report.html" > "$scratch/broken.html"
load broken "$scratch/broken.html"
if problems broken 4 10 > "$scratch/broken.why"; then
  echo "a page loading an external image passed the checks"
  exit 1
fi
echo "html views: report and diff rendered in $browser with no console message; screenshots in $out"
