#!/usr/bin/env bash
# Assembles the image's base offline, from this machine: a Java runtime jlink'ed from the JDK that runs
# the build, plus gcc, binutils and the C library headers from this machine's Debian packages (the CPU
# backend compiles kernels with gcc and refuses to open its devices when gcc cannot run). Writes a
# `docker save`-format tar that Jib takes as its base (`tar://`), so file modes and symlinks are kept
# exactly as tar records them and the base is one layer of its own, below the application's layers.
#
# usage: build-base.sh JAVA_HOME OUT_DIR
# Skips the work when OUT_DIR/base.tar exists and was made from the same JDK, packages and script.
set -euo pipefail

java_home=$1
out=$2
script_hash=$(sha256sum "$0" | cut -d' ' -f1)

# Packages whose files make the C toolchain; shared libraries they need are found with ldd below.
packages=(gcc gcc-12 cpp-12 binutils binutils-x86-64-linux-gnu libgcc-12-dev libc6 libc6-dev linux-libc-dev
  libcrypt-dev)
# Modules of the runtime: what `jdeps --print-module-deps` finds in the server's jars, less java.desktop
# (micrometer-core's optional AWT-free uses do not need it), plus jdk.crypto.ec for TLS when it comes.
modules=java.base,java.logging,java.management,jdk.management,jdk.httpserver,jdk.unsupported,java.naming,java.sql,jdk.jfr,jdk.crypto.ec

for tool in dpkg-query ldd ldconfig tar sha256sum; do
  command -v "$tool" >/dev/null || { echo "build-base.sh: $tool is needed (a Debian-like build machine)" >&2; exit 1; }
done
key="$script_hash $(readlink -f "$java_home") $("$java_home/bin/java" -version 2>&1 | head -n 1) \
$(dpkg-query -W -f '${Package}=${Version} ' "${packages[@]}")"
if [ -f "$out/base.tar" ] && [ "$(cat "$out/base.key" 2>/dev/null)" = "$key" ]; then
  echo "build-base.sh: $out/base.tar is up to date"
  exit 0
fi

rm -rf "$out"
root=$out/rootfs
mkdir -p "$root"/usr/bin "$root"/usr/sbin "$root"/usr/lib "$root"/usr/lib64 "$root"/etc "$root"/opt "$root"/home/nonroot
# merged /usr, as on the build machine: /lib/x86_64-linux-gnu/libc.so.6 and the loader path /lib64/... resolve
ln -s usr/bin "$root/bin"
ln -s usr/sbin "$root/sbin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
mkdir -p "$root/tmp" "$root/proc" "$root/dev" "$root/sys"
chmod 1777 "$root/tmp"

# 1. the Java runtime
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages \
  --output "$root/opt/java"

# 2. the C toolchain. A path is copied to where it really lives under merged /usr; a symlink is copied
# as a symlink and its target too.
canonical() {
  case $1 in
    /lib/*|/lib64/*|/bin/*|/sbin/*) echo "/usr$1" ;;
    *) echo "$1" ;;
  esac
}
declare -A seen=()
copy_path() {
  local p=$1 c
  c=$(canonical "$p")
  [ -n "${seen[$c]:-}" ] && return 0
  seen[$c]=1
  [ -e "$p" ] || [ -L "$p" ] || return 0
  [ -d "$p" ] && [ ! -L "$p" ] && { mkdir -p "$root$c"; return 0; }
  mkdir -p "$root$(dirname "$c")"
  cp -a "$p" "$root$c"
  if [ -L "$p" ]; then
    local t
    t=$(readlink "$p")
    case $t in /*) ;; *) t=$(dirname "$p")/$t ;; esac
    copy_path "$t"
  fi
}
skip() {
  case $1 in
    /usr/share/*|*/lto1|*/lto-dump*|*gcov*|*/libasan*|*/libtsan*|*/liblsan*|*/libubsan*|*/libhwasan*|\
    */libitm*|*/libgomp*|*/libatomic*|*/libquadmath*|*/plugin/*|*/gconv/*|*/audit/*|*/gp-*|*/gprof*|\
    */libgprofng*|*/gold|*/ld.gold|*/dwp|*/x86_64-linux-gnu-gold|*/x86_64-linux-gnu-dwp) return 0 ;;
    *.a) case $1 in */libc_nonshared.a|*/libgcc.a|*/libgcc_eh.a|*/libmvec.a|*/libm-2*.a) return 1 ;; *) return 0 ;; esac ;;
  esac
  return 1
}
for pkg in "${packages[@]}"; do
  while IFS= read -r f; do
    skip "$f" || copy_path "$f"
  done < <(dpkg-query -L "$pkg")
done
# shared libraries of every program and library copied (cc1, as, ld, collect2, the JVM's own)
while IFS= read -r lib; do
  copy_path "$lib"
done < <(find "$root" -type f \( -perm -u+x -o -name '*.so*' \) -print0 | xargs -0 -r ldd 2>/dev/null \
  | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | grep -v "^$root/" | sort -u)
copy_path /lib64/ld-linux-x86-64.so.2
cp -a /etc/ld.so.conf "$root/etc/" 2>/dev/null || true
[ -d /etc/ld.so.conf.d ] && cp -a /etc/ld.so.conf.d "$root/etc/"
ldconfig -r "$root"

# 3. the non-root user the image runs as (uid/gid 65532, as in distroless images)
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:arrayd:/home/nonroot:/usr/sbin/nologin\n' \
  > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
chown 65532:65532 "$root/home/nonroot"

size=$(du -sh "$root" | cut -f1)
# 4. a `docker save` tar: manifest.json, the config, one uncompressed layer
(cd "$root" && tar --numeric-owner --sort=name --mtime='@0' -cf "$out/layer.tar" .)
diff_id=$(sha256sum "$out/layer.tar" | cut -d' ' -f1)
cat > "$out/config.json" <<EOF
{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/opt/java/bin:/usr/bin:/bin","JAVA_HOME=/opt/java","LANG=C.UTF-8"]},"rootfs":{"type":"layers","diff_ids":["sha256:$diff_id"]},"history":[{"created_by":"deploy/src/image/build-base.sh: jlink ($modules) of $(readlink -f "$java_home"); gcc, binutils and C headers from the build machine's Debian packages"}]}
EOF
echo '[{"Config":"config.json","RepoTags":["arrayd-base:local"],"Layers":["layer.tar"]}]' > "$out/manifest.json"
(cd "$out" && tar --numeric-owner -cf base.tar manifest.json config.json layer.tar)
rm -rf "$out/layer.tar" "$root"  # base.tar holds it all
echo "$key" > "$out/base.key"
echo "build-base.sh: $out/base.tar ($size unpacked)"
