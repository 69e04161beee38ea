#!/usr/bin/env bash
# The GPU check: runs arrayd's CUDA backend on this machine's GPU with nothing but this folder — its own Java
# runtime (runtime.tar.gz, unpacked into a temporary folder), the jars in lib/, the NVIDIA driver and an NVRTC library
# (CUDA 13 or 12: from the toolkit, the system, or Python's nvidia wheels). No JDK, no Maven, no network.
#
# usage, from the repository root:  gpu-kit/target/gpu-kit/run.sh
# Writes into $OUT (default: this folder's out/), at most 8 files:
#   summary.txt          every step with its time and outcome, the probe, the figures, and the RESULT lines
#   probe.txt            the GPU, the driver's CUDA version and the NVRTC library, or why CUDA is unavailable;
#                        the host (CPU, cores, memory, kernel)
#   junit.txt            the CUDA conformance suite, the CUDA IR, peer-copy and fast-path tests, the random IR
#                        differential suite
#   junit-reports.tar.gz their JUnit XML reports
#   daemon.log           a daemon serving cpu and cuda
#   entry.log            a daemon with no devices of its own that has the first as its peer (a GPU pool's member)
#   demo.txt             every IR demo kernel on the GPU, the multi-device demo across cpu:0 and cuda:0, and the
#                        matmul demo on the GPU through the entry daemon (pool/cuda:0)
#   bench.txt            the CUDA benchmark against raw JCuda
# Where there is no GPU it runs to the end all the same: the suites report themselves skipped with the reason,
# the daemon and the demos run on the CPU, and the summary says why CUDA is unavailable. Exit status 0 when
# every step that could run passed.
set -uo pipefail

kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-$kit/out}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/arrayd-gpu-check.XXXXXX")
daemon_pid=
entry_pid=
stop() { # stop PID: ends a daemon this script started
  if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
  fi
}
cleanup() {
  stop "$entry_pid"
  stop "$daemon_pid"
  rm -rf "$work"
}
trap cleanup EXIT

summary=$out/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
failed=0
begin=$(date +%s)

# step NAME SECONDS LOG COMMAND...: runs COMMAND with a time limit, its output appended to LOG
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local t0 rc
  t0=$(date +%s)
  echo "== $name: $*" >> "$log"
  timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
  rc=$?
  local took=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ]; then
    say "step $name: ok (${took} s)"
  else
    [ "$rc" -eq 124 ] && say "step $name: FAILED: over its ${limit} s (see $(basename "$log"))" \
      || say "step $name: FAILED with exit status $rc (${took} s; see $(basename "$log"))"
    failed=1
  fi
  return "$rc"
}

say "arrayd GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"

# 1. the Java runtime, unpacked outside the kit (the kit keeps its size)
mkdir -p "$work/runtime" && tar xzf "$kit/runtime.tar.gz" -C "$work/runtime"
java=$work/runtime/bin/java
step runtime 60 "$out/probe.txt" "$java" -version || { say "RESULT gpu-check runtime=failed"; exit 1; }
cp=$(ls "$kit"/lib/*.jar | grep -v junit-platform-console-standalone | tr '\n' ':')
launcher=$(ls "$kit"/lib/junit-platform-console-standalone-*.jar)
jvm=(--enable-native-access=ALL-UNNAMED -Djava.io.tmpdir="$work")

# 2. NVRTC: where the loader does not find it by itself, the toolkit's folders and Python's nvidia wheels
nvrtc_dirs=()
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu; do
  compgen -G "$d/libnvrtc.so*" > /dev/null && nvrtc_dirs+=("$d")
done
if command -v python3 > /dev/null; then
  while IFS= read -r d; do
    [ -n "$d" ] && nvrtc_dirs+=("$d")
  done < <(python3 - 2>/dev/null <<'EOF'
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()] + [p for p in sys.path if p.endswith("-packages")])
for root in sorted(roots):
    for lib in sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib", "libnvrtc.so*"))):
        print(os.path.dirname(lib))
EOF
  )
fi
if [ ${#nvrtc_dirs[@]} -gt 0 ]; then
  joined=$(printf '%s:' "${nvrtc_dirs[@]}")
  export LD_LIBRARY_PATH=${joined}${LD_LIBRARY_PATH:-}
  say "NVRTC searched in: ${nvrtc_dirs[*]}"
fi
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  | sed 's/^/gpu: /' >> "$out/probe.txt" 2>&1
# the host, for the report (bin/arrayd bench cuda --from): CPU model, cores, memory, system
host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
host_mem=$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
echo "host: ${host_cpu:-unknown CPU}; $(nproc) cores; ${host_mem}; $(uname -sr); $(ldd --version 2>/dev/null | head -n 1)" \
  >> "$out/probe.txt"

# 3. the probe: is there a GPU, and which NVRTC
step probe 60 "$out/probe.txt" "$java" "${jvm[@]}" -cp "$cp" dev.arrayd.devices.cuda.CudaProbe
grep -E '^(host|gpu|cuda|driver|nvrtc):' "$out/probe.txt" | tee -a "$summary"
cuda=unavailable
grep -q '^RESULT cuda-probe available=1' "$out/probe.txt" && cuda=available

# 4. the suites: conformance, CUDA IR, peer copies, the fast paths, the random IR differential suite (skipped, with the reason, without a GPU)
step tests 240 "$out/junit.txt" "$java" "${jvm[@]}" -jar "$launcher" execute --disable-banner --details=summary \
  --class-path "$cp" --reports-dir "$work/junit" \
  --select-class dev.arrayd.devices.cuda.CudaDeviceConformanceTest \
  --select-class dev.arrayd.devices.cuda.CudaIrTest \
  --select-class dev.arrayd.devices.cuda.CudaPeerCopyTest \
  --select-class dev.arrayd.devices.cuda.CudaFastPathsTest \
  --select-class dev.arrayd.devices.cuda.CudaIrDifferentialProperties
tests_rc=$?
grep -E 'tests (successful|failed|skipped|aborted)' "$out/junit.txt" | sed 's/^[^0-9]*\[ *//; s/ *\]$//' | tee -a "$summary"
[ -d "$work/junit" ] && tar czf "$out/junit-reports.tar.gz" -C "$work/junit" .

# 5. a daemon with the GPU (or the CPU alone) and the demos through it
if [ "$cuda" = available ]; then devices=cpu,cuda; on=cuda:0; else devices=cpu:2; on=cpu:0; fi
sock=$work/arrayd.sock
"$java" "${jvm[@]}" -cp "$cp" dev.arrayd.cli.Main serve --devices "$devices" --port 0 --metrics-port -1 --uds "$sock" \
  --port-file "$work/port" > "$out/daemon.log" 2>&1 &
daemon_pid=$!
# await PID TEST...: runs TEST every 0.2 s until it succeeds (status 0), or fails once PID has exited or a minute passed
await() {
  local pid=$1
  shift
  for _ in $(seq 1 300); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}
healthy() { "$java" -cp "$cp" dev.arrayd.cli.Main health --target "unix://$1" > /dev/null 2>&1; }
lists() { "$java" -cp "$cp" dev.arrayd.cli.Main devices --target "unix://$1" 2>/dev/null | grep -q "^$2 "; }
if await "$daemon_pid" healthy "$sock"; then
  say "daemon: serving $devices"
  for k in vadd saxpy sum matmul softmax; do
    step "demo-$k" 60 "$out/demo.txt" "$java" "${jvm[@]}" -cp "$cp" dev.arrayd.cli.Main demo --target "unix://$sock" \
      --kernel "$k" --device "$on"
  done
  step demo-multi-device 90 "$out/demo.txt" "$java" "${jvm[@]}" -cp "$cp" dev.arrayd.cli.Main demo \
    --target "unix://$sock" --scenario multi-device
  # the same device through an entry daemon that has none of its own and the first as its peer "pool"
  entry=$work/entry.sock
  "$java" "${jvm[@]}" -cp "$cp" dev.arrayd.cli.Main serve --devices none --peers "pool=127.0.0.1:$(cat "$work/port")" \
    --port 0 --metrics-port -1 --uds "$entry" > "$out/entry.log" 2>&1 &
  entry_pid=$!
  if await "$entry_pid" lists "$entry" "pool/$on"; then
    say "entry daemon: serving pool/$on"
    step demo-remote 90 "$out/demo.txt" "$java" "${jvm[@]}" -cp "$cp" dev.arrayd.cli.Main demo --target "unix://$entry" \
      --kernel matmul --device "pool/$on"
  else
    say "step demo-remote: FAILED: the entry daemon does not list pool/$on (see entry.log)"
    failed=1
  fi
  stop "$entry_pid"
  entry_pid=
else
  say "step daemon: FAILED: not serving (see daemon.log)"
  failed=1
fi
stop "$daemon_pid"
daemon_pid=

# 6. the CUDA benchmark against raw JCuda (says why it is skipped without a GPU)
step bench 180 "$out/bench.txt" "$java" "${jvm[@]}" -cp "$cp" dev.arrayd.devices.cuda.CudaBench
grep -E '^(device|driver|launch|upload|transfer sweep|matmul|ir |guards|cuda benchmark)' "$out/bench.txt" | tee -a "$summary"
grep '^RESULT cuda' "$out/bench.txt" | tail -n 1 | tee -a "$summary"

outcome=ok
[ "$failed" = 1 ] && outcome=failed
say "RESULT gpu-check cuda=$cuda tests=$([ "$tests_rc" = 0 ] && echo ok || echo failed) outcome=$outcome seconds=$(( $(date +%s) - begin ))"
exit "$failed"
