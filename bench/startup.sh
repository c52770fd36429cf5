#!/usr/bin/env bash
# Start-up figures (`npm run bench:startup`, needs hyperfine from Debian): `platform-api --help`,
# `platform-api token` on a SQLite file, and `serve` from its start to its first answer to
# GET /ping/v2/ping (polled every 10 ms with curl; the server is then stopped). BIN measures another
# checkout's bin/platform-api.js (before/after comparisons); BENCH_RUNS runs each (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${BIN:-bin/platform-api.js}")
RUNS=${BENCH_RUNS:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset DATABASE_URL API_URL PORT REGISTRY_PORT REGISTRY_DIR LOG_LEVEL

node "$BIN" bootstrap --org bench --db "$dir/platform.db" > "$dir/owner.json"
uid=$(node -p 'require(process.argv[1]).identity.uid' "$dir/owner.json")
port=$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
cat > "$dir/first-answer.sh" <<SCRIPT
node "$BIN" serve --host 127.0.0.1 --port $port --registry-port 0 --db :memory: --log-level silent 2>"$dir/serve.err" &
pid=\$!
until curl -sf -o /dev/null http://127.0.0.1:$port/ping/v2/ping; do
  kill -0 \$pid 2>/dev/null || { cat "$dir/serve.err" >&2; exit 1; }
  sleep 0.01
done
kill \$pid
wait \$pid
SCRIPT

hyperfine --warmup 1 --runs "$RUNS" -N \
  --command-name "platform-api --help" "node $BIN --help" \
  --command-name "platform-api token" "node $BIN token --identity $uid --db $dir/platform.db" \
  --command-name "node -e 0 (baseline)" "node -e 0"
hyperfine --warmup 1 --runs "$RUNS" --command-name "serve, start to first answer" "bash $dir/first-answer.sh"
