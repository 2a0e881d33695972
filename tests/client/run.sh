#!/usr/bin/env bash
# Whether openapi.yaml generates a working client: openapi-typescript writes
# its types, no_casts.mjs and tsc --strict check client.mts against them, and
# client.test.mjs plays a game with it on a real chessd and redis-server.
# Usage: tests/client/run.sh OUT (where generated and compiled files go;
# make test gives $(BUILD)/client). CHESSD_BIN names the server. Installs
# nothing: npm ci --prefix tests/client (make deps) does.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tests/client/run.sh OUT}
client=tests/client
bin=$client/node_modules/.bin
if [ ! -x "$bin/openapi-typescript" ] || [ ! -x "$bin/tsc" ]; then
    echo "tests/client/run.sh: $client/node_modules is missing; run npm ci --prefix $client (make deps)" >&2
    exit 2
fi
mkdir -p "$out/gen"
out=$(cd "$out" && pwd)
rm -rf "$out/js"
# --default-non-nullable false: a property with a default stays optional
# when it is not required (openapi-typescript 7 makes it required otherwise,
# so a request would have to send first_move_ms or offer_draw).
"$bin/openapi-typescript" openapi.yaml --default-non-nullable false --output "$out/gen/chessd.d.ts" >/dev/null
node "$client/no_casts.mjs" "$client/client.mts"
# The client imports ./chessd.js; rootDirs finds it among the generated files.
cat >"$out/tsconfig.json" <<JSON
{
  "extends": "$PWD/$client/tsconfig.json",
  "compilerOptions": {
    "rootDir": "$PWD/$client",
    "rootDirs": ["$PWD/$client", "$out/gen"],
    "outDir": "$out/js"
  },
  "files": ["$PWD/$client/client.mts"]
}
JSON
"$bin/tsc" -p "$out/tsconfig.json"
echo "# $client/client.mts compiles (tsc --strict) against the types openapi-typescript generates from openapi.yaml"
timeout_flag=()
if node --test-timeout=1 -e '' >/dev/null 2>&1; then
    timeout_flag=(--test-timeout=60000)
fi
CHESSD_CLIENT_JS="$out/js/client.mjs" node --test "${timeout_flag[@]}" "$client/client.test.mjs"
