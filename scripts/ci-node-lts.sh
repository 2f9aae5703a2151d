#!/usr/bin/env bash
# The service on another Node LTS line, from nothing: the Node binary and headers come from the npm registry
# (package node-linux-<arch>@LINE), then, in a fresh clone of HEAD: a clean `npm install` (native modules built
# against that Node through npm_config_nodedir), `npm start` up to /readyz, the README's walk-through with curl
# (the shell block under "Walk-through with curl", run as written against this port) and the sandbox tests.
# Usage: scripts/ci-node-lts.sh [LINE]     LINE defaults to 24; KEEP=1 keeps the work folder; with
# CI_NODE_LTS_WAIT_FOR=FILE it installs, then waits for FILE to exist before starting the service.
# Exits 0 with a printed reason (and checks nothing) when the registry cannot be reached.
set -euo pipefail
LINE="${1:-24}"
PORT="${CI_NODE_LTS_PORT:-4199}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
say() { echo "ci-node-lts[$LINE]: $*"; }
case "$(uname -m)" in x86_64) ARCH=x64 ;; aarch64) ARCH=arm64 ;; *) ARCH="$(uname -m)" ;; esac
PKG="node-linux-$ARCH@$LINE"

if ! VERSIONS=$(timeout 60 npm view "$PKG" version --json --fetch-retries=1 --fetch-timeout=20000 2>/dev/null); then
  say "SKIPPED: the npm registry did not answer for $PKG, so Node $LINE cannot be fetched here"
  exit 0
fi
# One version prints as a string, several as an array (ascending).
VERSION=$(node -p "[].concat(JSON.parse(process.argv[1])).pop()" "$VERSIONS")

WORK="$(mktemp -d "${TMPDIR:-/tmp}/ci-node-lts-$LINE.XXXXXX")"
SERVICE_PID=""
cleanup() {
  if [ -n "$SERVICE_PID" ] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -INT -- "-$SERVICE_PID" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$SERVICE_PID" 2>/dev/null || true
  fi
  if [ "${KEEP:-}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() { say "FAILED: $*"; [ -f "$WORK/service.log" ] && tail -n 40 "$WORK/service.log"; exit 1; }

say "Node $VERSION from the registry ($PKG)"
npm install --prefix "$WORK/node" --no-audit --no-fund --no-save --loglevel=error "$PKG" >/dev/null \
  || fail "npm install $PKG"
NODE_DIR="$WORK/node/node_modules/node-linux-$ARCH"
export PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR"
[ "$(node -v)" = "v$VERSION" ] || fail "node on PATH is $(node -v), expected v$VERSION"

git clone -q "$ROOT" "$WORK/repo"
cd "$WORK/repo"
say "clean npm install of $(git rev-parse --short HEAD) on $(node -v)"
start=$SECONDS
npm install --no-audit --no-fund > "$WORK/install.log" 2>&1 || { tail -n 40 "$WORK/install.log"; fail "npm install"; }
say "npm install took $((SECONDS - start)) s; sandbox library: $(node -p "require('./dist/src/sandbox/isolated-vm.js').isolatedVmPackage")"

# CI prepares this line while the main test suite runs, then starts the service once the suite is done
# (CI_NODE_LTS_WAIT_FOR names a file that appears then): the install is mostly network and disk, the rest is not.
if [ -n "${CI_NODE_LTS_WAIT_FOR:-}" ]; then
  say "prepared; waiting for $CI_NODE_LTS_WAIT_FOR before starting the service"
  while [ ! -e "$CI_NODE_LTS_WAIT_FOR" ]; do sleep 2; done
fi

say "npm start on port $PORT"
PORT="$PORT" setsid npm start > "$WORK/service.log" 2>&1 &
SERVICE_PID=$!
ready=""
for _ in $(seq 1 240); do
  kill -0 "$SERVICE_PID" 2>/dev/null || fail "npm start exited"
  if curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.5
done
[ -n "$ready" ] || fail "/readyz did not answer 200 within 120 s"
say "/readyz answers 200"

# The README's walk-through, exactly as a reader pastes it, on this port.
awk '/^## Walk-through with curl/ { on = 1 } on && /^```sh/ { code = 1; next } code && /^```/ { exit } code' \
  "$ROOT/README.md" | sed "s#127\.0\.0\.1:4000#127.0.0.1:$PORT#g" > "$WORK/walkthrough.sh"
[ -s "$WORK/walkthrough.sh" ] || fail "no walk-through block found in README.md"
bash -eo pipefail "$WORK/walkthrough.sh" > "$WORK/walkthrough.out" 2>&1 || { cat "$WORK/walkthrough.out"; fail "walk-through"; }
grep -qx 'HELLO ADA' "$WORK/walkthrough.out" || { cat "$WORK/walkthrough.out"; fail "the walk-through's run did not answer HELLO ADA"; }
grep -qx 'prod' "$WORK/walkthrough.out" || { cat "$WORK/walkthrough.out"; fail "the walk-through's aliased run did not name alias prod"; }
say "walk-through OK (the run answered HELLO ADA; the aliased run went through prod)"

kill -INT -- "-$SERVICE_PID"
for _ in $(seq 1 60); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.5; done
kill -0 "$SERVICE_PID" 2>/dev/null && fail "the service did not stop within 30 s of SIGINT"
SERVICE_PID=""
say "service stopped on SIGINT"

say "sandbox tests"
npx jest test/sandbox.test.ts test/fairness.sandbox.test.ts --runInBand
say "OK on Node $VERSION ($SECONDS s in all)"
