#!/usr/bin/env bash
# Checks that every C source and header of the tree follows .clang-format.
#   bash scripts/check_format.sh [--fix] [ROOT]
# ROOT defaults to the repository. The folders checked are the layers, the
# tests, the benchmarks and the fuzzers; build trees and node_modules are
# not. A file may switch the formatter off for a block it lays out by hand
# (`/* clang-format off */` ... `/* clang-format on */`), as generated tables
# do. Exit status 0 when every file is formatted, 1 when one is not (each
# named, with the first lines of its diff), 2 when clang-format is missing.
set -euo pipefail
fix=0
if [ "${1:-}" = --fix ]; then
    fix=1
    shift
fi
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
    echo "check_format: $cf not found (Debian package clang-format)" >&2
    exit 2
fi
[ -f "$root/.clang-format" ] || {
    echo "check_format: no .clang-format in $root" >&2
    exit 2
}
cd "$root"
dirs=()
for d in common filter protocol commands server module tools tests bench fuzz; do
    [ -d "$d" ] && dirs+=("$d")
done
[ ${#dirs[@]} -gt 0 ] || { echo "check_format: no sources in $root" >&2; exit 2; }
mapfile -t files < <(find "${dirs[@]}" \( -name node_modules -o -name 'build*' \) \
    -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
bad=0
for f in "${files[@]}"; do
    if [ $fix = 1 ]; then
        "$cf" -i --style=file "$f"
    elif ! "$cf" --style=file "$f" | cmp -s - "$f"; then
        echo "not formatted: $f"
        "$cf" --style=file "$f" | diff -u "$f" - | sed -n '3,12p' || true
        bad=1
    fi
done
[ $bad = 0 ] && echo "check_format: ${#files[@]} files formatted as .clang-format says"
exit $bad
