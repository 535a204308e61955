#!/usr/bin/env bash
# Opens an HTML report in headless Chromium and fails when the page logs anything to the
# console (CSP violations, errors), requests anything over the network, or is wider than
# the window at 1280 or 800 px (document.documentElement.scrollWidth > clientWidth: the
# reader would have to scroll the whole page sideways; a wide table scrolling inside its
# own box is fine). Saves screenshots of the top of the page at both widths.
#
#   scripts/html_check.sh REPORT.html SCREENSHOT.png    # also writes SCREENSHOT-800.png
#
# The width check loads a copy of the page whose Content-Security-Policy also allows one
# inline script, which measures the layout after load and writes the result into the DOM
# that chromium --dump-dom prints.
#
# Exit codes: 0 clean, 1 console output or network requests, 2 usage, 77 no chromium.
# Chromium's own background traffic (component updates, time sync) is routed to a dead
# local proxy and ignored: a request counts when the page initiated it (its initiator is
# an origin, or its network isolation key is the file:// page's).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 REPORT.html SCREENSHOT.png" >&2
  exit 2
fi
report="$(realpath "$1")"
screenshot="$(realpath -m "$2")"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "SKIPPED html check: chromium not installed (apt-get install chromium)" >&2
  exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --proxy-server=http://127.0.0.1:9 \
  --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
  --log-net-log="$work/net.json" --hide-scrollbars --window-size=1280,1600 \
  --screenshot="$screenshot" "file://$report" 2> "$work/stderr" || {
  cat "$work/stderr" >&2
  echo "chromium failed on $report" >&2
  exit 1
}

narrow_screenshot="${screenshot%.png}-800.png"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --proxy-server=http://127.0.0.1:9 --user-data-dir="$work/profile" \
  --hide-scrollbars --window-size=800,1600 \
  --screenshot="$narrow_screenshot" "file://$report" 2>/dev/null || {
  echo "chromium failed on $report at 800 px" >&2
  exit 1
}

python3 - "$report" "$work/probe.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>window.addEventListener('load', function () {
  var root = document.documentElement, wide = [];
  document.querySelectorAll('body *').forEach(function (element) {
    var right = element.getBoundingClientRect().right;
    if (right > root.clientWidth + 0.5 && wide.length < 5) {
      wide.push(element.tagName.toLowerCase() + (element.className ? '.' + element.className : '') + ' to ' + Math.round(right) + ' px');
    }
  });
  var out = document.createElement('pre');
  out.id = 'width-probe';
  out.textContent = 'WIDTH ' + root.scrollWidth + ' ' + root.clientWidth + ' ' + wide.join(', ');
  document.body.appendChild(out);
});</script>"""
page = page.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
index = page.rfind("</body>")
page = page[:index] + probe + page[index:] if index >= 0 else page + probe
open(sys.argv[2], "w", encoding="utf-8").write(page)
PY

failed=0
for width in 1280 800; do
  measured="$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --proxy-server=http://127.0.0.1:9 --user-data-dir="$work/profile" \
    --hide-scrollbars --window-size="$width,1600" --virtual-time-budget=5000 \
    --dump-dom "file://$work/probe.html" 2>/dev/null |
    sed -n 's/.*<pre id="width-probe">WIDTH \([^<]*\)<.*/\1/p' || true)"
  read -r scroll_width client_width rest <<< "$measured"
  if [ -z "${scroll_width:-}" ]; then
    echo "could not measure the page width at $width px" >&2
    failed=1
  elif [ "$scroll_width" -gt "$client_width" ]; then
    echo "the page overflows sideways at $width px: scrollWidth $scroll_width > clientWidth $client_width (widest: $rest)" >&2
    failed=1
  fi
done

if grep -q 'CONSOLE' "$work/stderr"; then
  echo "console messages from $report:" >&2
  grep 'CONSOLE' "$work/stderr" >&2
  failed=1
fi
if ! python3 - "$work/net.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
starts = [
    event.get("params", {})
    for event in log["events"]
    if names.get(event["type"]) == "URL_REQUEST_START_JOB"
]
page_requests = sorted({
    params["url"]
    for params in starts
    if "url" in params
    and (params.get("initiator") != "not an origin"
         or params.get("network_isolation_key", "").startswith("file://"))
})
for url in page_requests:
    print(f"network request from the page: {url}", file=sys.stderr)
sys.exit(1 if page_requests else 0)
PY
then
  failed=1
fi
for shot in "$screenshot" "$narrow_screenshot"; do
  if [ ! -s "$shot" ]; then
    echo "no screenshot written to $shot" >&2
    failed=1
  fi
done
if [ "$failed" -eq 0 ]; then
  echo "html check passed: $report (no console messages, no network requests, no sideways overflow at 1280 or 800 px); screenshots $screenshot, $narrow_screenshot"
fi
exit "$failed"
