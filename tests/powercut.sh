#!/usr/bin/env bash
# The power-cut suite (tests/integ/test_powercut.py) at every crash point
# its records offer (POINTS=0, the default) or at most POINTS per scenario,
# and its table: per scenario the file system calls recorded, the crash
# points and disk states tried, acknowledged items lost, flushed keys back,
# refused starts and other wrong states. CI runs the same suite with a
# small sample (ctest's integ.test_powercut).
#
#   bash tests/powercut.sh            # every point
#   POINTS=50 bash tests/powercut.sh  # at most 50 per scenario beyond
#                                     # the publishing moments
#   TORN=2                            # mixed states per point (default)
#   PACE=0.02                         # each writer's pause between adds
#                                     # (default; ctest's is 0.002)
#   BUILD_DIR=build-asan bash tests/powercut.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${BUILD_DIR:-build}" && pwd)
report=$(mktemp)
trap 'rm -f "$report"' EXIT
start=$SECONDS
status=0
CUCKOOD_POWERCUT_POINTS=${POINTS:-0} CUCKOOD_POWERCUT_TORN=${TORN:-2} \
CUCKOOD_POWERCUT_PACE=${PACE:-0.02} \
CUCKOOD_POWERCUT_REPORT=$report \
CUCKOOD_FSFAULT_LIB=$build/tests/integ/libfsfault.so \
CUCKOOD_BIN=$build/server/cuckood PYTHONPATH=tests \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    tests/integ/test_powercut.py || status=$?
/usr/bin/python3 - "$report" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cols = ("ops", "points", "states", "lost", "back", "refused", "wrong")
print("| scenario | calls recorded | crash points | states | acked lost "
      "| flushed back | refused starts | other wrong |")
print("|---" * 8 + "|")
for r in rows:
    print("| %s | %s |" % (r["test"].replace("test_", ""),
                           " | ".join(str(r[c]) for c in cols)))
PY
echo "time: $((SECONDS - start)) s, exit status $status"
exit $status
