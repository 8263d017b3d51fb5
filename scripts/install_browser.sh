#!/usr/bin/env bash
# The console's browser test needs Debian's chromium and chromium-driver. Install them where they
# are missing and this user may (root with apt-get); otherwise say why, and the test skips.
set -uo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[browser] installing chromium and chromium-driver (apt-get)" >&2
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
            >/tmp/llm_planner_ros-browser.log 2>&1; then
        exit 0
    fi
    echo "[browser] apt-get failed (see /tmp/llm_planner_ros-browser.log); the console's browser test will skip" >&2
else
    echo "[browser] chromium/chromedriver missing and not root with apt-get; the console's browser test will skip" >&2
fi
exit 0
