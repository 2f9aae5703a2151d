#!/usr/bin/env bash
# End-to-end check of the compose stack: build and start it, run a circuit through the API container
# (which only enqueues: RUN_WORKER=false) so that the worker container executes it, then tear it all
# down (volumes included). Needs docker with the compose plugin and network access to pull images.
# Usage: scripts/compose-smoke.sh        (KEEP=1 leaves the stack running for inspection)
set -euo pipefail
cd "$(dirname "$0")/.."

export COMPOSE_PROJECT_NAME=circuit-smoke
export SECRET_KEY="${SECRET_KEY:-$(openssl rand -hex 32)}"
export API_PORT="${API_PORT:-4400}"
B="http://127.0.0.1:${API_PORT}/api/v1"
compose() { docker compose -f docker-compose.yml "$@"; }
cleanup() { [ "${KEEP:-}" = 1 ] || compose down -v --remove-orphans >/dev/null 2>&1 || true; }
trap cleanup EXIT
fail() { echo "smoke: FAILED: $*" >&2; compose ps >&2 || true; compose logs --tail 50 >&2 || true; exit 1; }

echo "smoke: building and starting the stack"
compose up --build --detach --wait --wait-timeout 300 || fail "the stack did not become healthy"
compose ps

echo "smoke: a user and token through the CLI in the api container"
USER_JSON=$(compose exec -T api node bin/circuits.js user create --username smoke --credits 10) || fail "user create"
TOKEN=$(node -e 'console.log(JSON.parse(process.argv[1]).token)' "$USER_JSON")

echo "smoke: a circuit through REST, its first version through GraphQL"
CIRCUIT=$(curl -fsS -X POST "$B/circuits" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"name":"hello"}') || fail "create circuit"
CIRCUIT_UID=$(node -e 'console.log(JSON.parse(process.argv[1]).payload.uid)' "$CIRCUIT")
ADAPTOR=$(node -e 'console.log(JSON.parse(process.argv[1]).payload.adaptor_uid)' "$CIRCUIT")
DEFINITION='{"query_schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"steps":[{"id":"greet","kind":"template","template":"Hello {{input.name}}"},{"id":"shout","kind":"transform","expression":"$uppercase(steps.greet.output)"}],"output":"steps.shout.output"}'
curl -fsS -X POST "http://127.0.0.1:${API_PORT}/graphql" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d "{\"query\":\"mutation(\$c: ID!, \$d: JSON!) { publishCircuitVersion(circuitUid: \$c, definition: \$d) { uid } }\",\"variables\":{\"c\":\"$CIRCUIT_UID\",\"d\":$DEFINITION}}" \
  | grep -q '"publishCircuitVersion":{"uid"' || fail "publish version"

echo "smoke: a run, executed by the worker container"
RUN=$(curl -fsS -X POST "$B/circuit-adaptors/$ADAPTOR/query" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"input":{"name":"Ada"}}') || fail "submit run"
RUN_UID=$(node -e 'console.log(JSON.parse(process.argv[1]).payload.uid)' "$RUN")
STATE=""
for _ in $(seq 1 60); do
  RUN=$(curl -fsS "$B/circuit-runs/$RUN_UID" -H "Authorization: Bearer $TOKEN")
  STATE=$(node -e 'console.log(JSON.parse(process.argv[1]).payload.state)' "$RUN")
  [ "$STATE" = COMPLETED ] || [ "$STATE" = EXCEPTION ] && break
  sleep 0.5
done
[ "$STATE" = COMPLETED ] || fail "run $RUN_UID ended $STATE"
node -e 'const r = JSON.parse(process.argv[1]).payload; if (r.result_blob.output !== "HELLO ADA") process.exit(1)' "$RUN" || fail "unexpected result: $RUN"
compose logs worker | grep -q "$RUN_UID" || echo "smoke: (the worker logged nothing naming the run at LOG_LEVEL=${LOG_LEVEL:-info})"
compose exec -T worker cat /tmp/worker-heartbeat.json || fail "no worker heartbeat"

echo "smoke: OK (run $RUN_UID COMPLETED through api → MongoDB job store → worker)"
