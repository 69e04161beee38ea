#!/usr/bin/env bash
# Builds and tests the Python client; the Maven module calls it (./mvnw verify runs all three):
#   build.sh stubs   message classes from proto/ into src/arrayd/v1, by the protoc of the Java build
#                    (target/protoc/protoc; or $PROTOC), which is the version the protobuf runtime must match
#   build.sh wheel   a virtual environment in target/venv with the runtime dependencies and pytest (from the
#                    configured package index), the wheel in target/dist, installed into the environment
#   build.sh test    pytest against daemon processes started from cli's distribution ($ARRAYD_DIST)
# Without python3 (or its venv module) the wheel and the tests are skipped with the reason printed, unless
# ARRAYD_REQUIRE_PYTHON=1 (CI), which makes that a failure.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
target=$here/target
venv=$target/venv

python_problem() {
  command -v python3 >/dev/null || { echo "python3 not found"; return; }
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || { echo "python3 is $(python3 --version 2>&1) (expected: 3.10 or newer)"; return; }
  python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "python3 has no venv/ensurepip (Debian: python3-venv)"; return; }
}

skip_or_fail() {
  if [ "${ARRAYD_REQUIRE_PYTHON:-}" = 1 ]; then
    echo "client-python: $1 (ARRAYD_REQUIRE_PYTHON=1: failing)" >&2
    exit 1
  fi
  echo "client-python: SKIPPED $2: $1"
  exit 0
}

case ${1:-} in
  stubs)
    protoc=${PROTOC:-$target/protoc/protoc}
    chmod +x "$protoc" 2>/dev/null || true
    proto=${ARRAYD_PROTO:-$here/../proto/src/main/proto}
    wkt=$(find "$here/../proto/target/protoc-dependencies" -path '*/google/protobuf/duration.proto' 2>/dev/null | head -n 1)
    [ -n "$wkt" ] || { echo "client-python: no google/protobuf/*.proto under proto/target (build the proto module first)" >&2; exit 1; }
    out=$here/src/arrayd/v1
    rm -rf "$out" && mkdir -p "$out"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    (cd "$proto" && "$protoc" -I . -I "${wkt%/google/protobuf/duration.proto}" --python_out="$tmp" --pyi_out="$tmp" arrayd/v1/*.proto)
    cp "$tmp"/arrayd/v1/*.py "$tmp"/arrayd/v1/*.pyi "$out/"
    echo '"""Message classes of the wire contract arrayd.v1, generated from proto/ at build time."""' > "$out/__init__.py"
    echo "client-python: stubs from $("$protoc" --version) in src/arrayd/v1 ($(ls "$out"/*_pb2.py | wc -l) files)"
    ;;
  wheel)
    problem=$(python_problem || true)
    [ -z "$problem" ] || skip_or_fail "$problem" "the wheel and the Python tests"
    if [ ! -x "$venv/bin/python" ]; then
      echo "client-python: creating $venv"
      python3 -m venv "$venv"
    fi
    # pip as configured here (an index, or a local mirror of part of it); no retries against an unreachable one
    export PIP_RETRIES=0 PIP_DISABLE_PIP_VERSION_CHECK=1
    log=$target/pip.log
    pip() { "$venv/bin/python" -m pip "$@" >> "$log" 2>&1 || { cat "$log" >&2; echo "client-python: pip $* failed" >&2; exit 1; }; }
    : > "$log"
    echo "client-python: installing grpcio, protobuf, numpy, ml-dtypes, pytest into the environment (log: target/pip.log)"
    pip install -q "grpcio>=1.60,<2" "protobuf>=7.36.2,<8" "numpy>=1.26" "ml-dtypes>=0.4" "pytest>=8" setuptools wheel
    rm -rf "$target/dist" "$here/build"
    pip wheel -q --no-deps --no-build-isolation -w "$target/dist" "$here"
    rm -rf "$here/build" "$here"/src/*.egg-info
    pip install -q --no-deps --force-reinstall "$target"/dist/arrayd-*.whl
    echo "client-python: $(basename "$target"/dist/arrayd-*.whl) built and installed into target/venv"
    ;;
  test)
    problem=$(python_problem || true)
    [ -z "$problem" ] || skip_or_fail "$problem" "the Python tests"
    [ -x "$venv/bin/python" ] || { echo "client-python: no target/venv (run the package phase first)" >&2; exit 1; }
    export ARRAYD_DIST=${ARRAYD_DIST:-$here/../cli/target/dist}
    cd "$here/tests"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$target/pytest-report.xml" .
    ;;
  *)
    echo "usage: build.sh stubs|wheel|test" >&2
    exit 2
    ;;
esac
