#!/usr/bin/env bash
# Prints the path of a Node.js runtime new enough for the client tests
# (node-redis 6 and ioredis 6 need Node >= 20): `node` from PATH when it is,
# otherwise a Node 20 installed from the npm registry (the node-linux-<arch>
# package ships the binary) into ${NODE_DIR:-build/node20}. Debian 12's own
# nodejs is 18. Progress goes to standard error; needs npm for the install.
set -euo pipefail
cd "$(dirname "$0")/.."
want=20

major() { "$1" --version 2>/dev/null | sed -n 's/^v\([0-9][0-9]*\)\..*/\1/p'; }

if command -v node >/dev/null 2>&1; then
    have=$(major node)
    if [ -n "$have" ] && [ "$have" -ge "$want" ]; then
        command -v node
        exit 0
    fi
    echo "node.sh: node ${have:-of unknown version} is older than $want" >&2
fi

case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "node.sh: no Node $want package for $(uname -m); install" \
           "Node >= $want and put it first in PATH" >&2
       exit 1 ;;
esac
dir=${NODE_DIR:-build/node20}
bin="$dir/node_modules/node-linux-$arch/bin/node"
have=$(major "$bin" || true)
if [ -z "$have" ] || [ "$have" -lt "$want" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "node.sh: npm is needed to install Node $want" \
             "(scripts/deps.sh test installs it)" >&2
        exit 1
    fi
    echo "node.sh: installing Node $want from npm into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund \
        --loglevel=error "node-linux-$arch@$want" >&2
    have=$(major "$bin" || true)
    if [ -z "$have" ] || [ "$have" -lt "$want" ]; then
        echo "node.sh: $bin does not run as Node $want" >&2
        exit 1
    fi
fi
echo "$(cd "$(dirname "$bin")" && pwd)/node"
