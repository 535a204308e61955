#!/usr/bin/env bash
# Opens an HTML report in headless Chromium and fails when the page logs anything to the
# console (CSP violations, errors) or requests anything over the network; saves a
# screenshot of the top of the page.
#
#   scripts/html_check.sh REPORT.html SCREENSHOT.png
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

failed=0
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
if [ ! -s "$screenshot" ]; then
  echo "no screenshot written to $screenshot" >&2
  failed=1
fi
if [ "$failed" -eq 0 ]; then
  echo "html check passed: $report (no console messages, no network requests); screenshot $screenshot"
fi
exit "$failed"
