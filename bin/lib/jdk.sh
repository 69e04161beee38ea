# Sourced by ./mvnw and bin/arrayd (POSIX sh). Makes JAVA_HOME point at a JDK 25 or newer.
#
# Order: $JAVA_HOME if it is new enough, then `java` on PATH, then the newest JDK >= 25
# under the system's JVM folder (/usr/lib/jvm, or $ARRAYD_JVM_DIR). Exits with a clear
# message naming what to install when none is found.

arrayd_java_major() {
  # prints the feature version of the java binary $1 (e.g. 25), or 0
  "$1" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1 | grep . || echo 0
}

arrayd_find_jdk() {
  _need=25
  if [ -n "${JAVA_HOME-}" ] && [ -x "$JAVA_HOME/bin/javac" ] \
     && [ "$(arrayd_java_major "$JAVA_HOME/bin/java")" -ge "$_need" ]; then
    return 0
  fi
  _onpath=$(command -v javac 2>/dev/null || true)
  if [ -n "$_onpath" ]; then
    _home=$(dirname "$(dirname "$(readlink -f "$_onpath")")")
    if [ -x "$_home/bin/java" ] && [ "$(arrayd_java_major "$_home/bin/java")" -ge "$_need" ]; then
      JAVA_HOME=$_home; export JAVA_HOME; return 0
    fi
  fi
  _best=""; _bestv=0
  _jvmdir=${ARRAYD_JVM_DIR:-/usr/lib/jvm}
  if [ -d "$_jvmdir" ]; then
    for _cand in $(ls -1 "$_jvmdir" 2>/dev/null); do
      _c="$_jvmdir/$_cand"
      [ -x "$_c/bin/javac" ] || continue
      _v=$(arrayd_java_major "$_c/bin/java")
      if [ "$_v" -ge "$_need" ] && [ "$_v" -gt "$_bestv" ]; then _best=$_c; _bestv=$_v; fi
    done
  fi
  if [ -n "$_best" ]; then
    JAVA_HOME=$_best; export JAVA_HOME; return 0
  fi
  echo "arrayd needs a JDK $_need or newer (found: ${JAVA_HOME:-no JAVA_HOME}, java on PATH: $(command -v java || echo none))." >&2
  echo "Install one, e.g. 'apt-get install temurin-25-jdk' (Adoptium repository) or unpack a JDK 25 and set JAVA_HOME to it." >&2
  exit 1
}

arrayd_find_jdk
