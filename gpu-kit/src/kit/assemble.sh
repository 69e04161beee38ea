#!/usr/bin/env bash
# Assembles the GPU check kit from the build's jars: a Java runtime jlink'ed from the JDK that runs the build
# (packed as runtime.tar.gz: about 22 MB instead of 49), the jars with the native parts that a Linux x86-64
# GPU machine does not load taken out (JCuda's runtime, NVRTC and PTX-compiler bindings — arrayd binds NVRTC
# itself; Netty's libraries for other systems), run.sh, and CONTENTS (every file with its size). Fails when
# the folder is not under 60 MiB, what a GPU machine's call carries with the repository.
#
# usage: assemble.sh JAVA_HOME LIB_DIR OUT_DIR
set -euo pipefail

java_home=$1
libs=$2
out=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
limit=$((60 * 1024 * 1024))
# what the daemon, the CUDA suites (JUnit's XML reports: java.xml) and the benchmark load
modules=java.base,java.logging,java.management,jdk.management,jdk.httpserver,jdk.unsupported,java.naming,java.sql,java.xml,jdk.jfr,jdk.crypto.ec,java.net.http

echo "gpu kit: assembling $out"
rm -rf "$out"
mkdir -p "$out/lib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "gpu kit: jlink ($modules)"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --output "$work/runtime"
tar czf "$out/runtime.tar.gz" -C "$work/runtime" .

# trim JAR DEST PATTERN...: JAR without the entries matching the shell patterns
trim() {
  local jar=$1 dest=$2
  shift 2
  local dir=$work/trim
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && "$java_home/bin/jar" xf "$jar")
  local p
  for p in "$@"; do
    # shellcheck disable=SC2086 # the patterns are globs
    rm -f "$dir"/$p
  done
  "$java_home/bin/jar" --create --no-manifest --file "$dest" -C "$dir" .
}

for jar in "$libs"/*.jar; do
  name=$(basename "$jar")
  case $name in
    jcuda-natives-*)
      trim "$jar" "$out/lib/$name" 'lib/libJCudaRuntime-*' 'lib/libJNvrtc-*' 'lib/libJNvPTXCompiler-*' ;;
    grpc-netty-shaded-*)
      trim "$jar" "$out/lib/$name" 'META-INF/native/*aarch_64*' 'META-INF/native/*osx*' 'META-INF/native/*windows*' ;;
    *)
      cp "$jar" "$out/lib/$name" ;;
  esac
done

cp "$here/run.sh" "$out/run.sh"
chmod 755 "$out/run.sh"

(cd "$out" && find . -type f ! -name CONTENTS -printf '%s %P\n' | sort -k2) > "$out/CONTENTS"
total=$(awk '{s += $1} END {print s}' "$out/CONTENTS")
echo "total $total bytes" >> "$out/CONTENTS"
echo "gpu kit: $(wc -l < "$out/CONTENTS") files, $((total / 1024 / 1024)) MiB in $out"
if [ "$total" -ge "$limit" ]; then
  echo "gpu kit: $total bytes (expected: under $limit, 60 MiB)" >&2
  exit 1
fi
