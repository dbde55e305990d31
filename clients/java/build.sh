#!/bin/sh
# Builds the Java client (DESIGN §12) with the JDK's own tools, no Gradle or Maven:
#   build.sh jar    build/pushhub-client.jar (src/ and resources/, no dependencies) and
#                   build/pushhub-client-okhttp.jar (okhttp/src/, against Debian's libokhttp-java)
#   build.sh test   the jars, then the tests (test/) run by our TestRunner
# Java 11 bytecode and API (--release 11: what Android's desugaring and older JVMs take), every
# lint on, warnings are errors. Called by `make java` / `make java-test`.
set -eu
cd "$(dirname "$0")"
OKHTTP_CP=/usr/share/java/okhttp.jar:/usr/share/java/okio.jar
JAVAC="javac --release 11 -Xlint:all -Werror -encoding UTF-8"

jars() {
  rm -rf build/classes build/okhttp-classes
  mkdir -p build/classes build/okhttp-classes
  $JAVAC -d build/classes $(find src -name '*.java' | sort)
  # resources/: META-INF/proguard/pushhub-client.pro, the shrinker rules Android builds apply.
  jar --create --file build/pushhub-client.jar -C build/classes . -C resources .
  $JAVAC -cp build/pushhub-client.jar:$OKHTTP_CP -d build/okhttp-classes $(find okhttp/src -name '*.java' | sort)
  jar --create --file build/pushhub-client-okhttp.jar -C build/okhttp-classes .
  echo "built build/pushhub-client.jar ($(wc -c < build/pushhub-client.jar) bytes), build/pushhub-client-okhttp.jar"
}

tests() {
  rm -rf build/test-classes
  mkdir -p build/test-classes
  $JAVAC -cp build/pushhub-client.jar:build/pushhub-client-okhttp.jar:$OKHTTP_CP -d build/test-classes \
    $(find test -name '*.java' | sort)
  # OkHttp on the class path for OkHttpTransport's tests; the core's tests need none of it.
  java -cp build/pushhub-client.jar:build/pushhub-client-okhttp.jar:$OKHTTP_CP:build/test-classes \
    io.pushhub.client.TestRunner build/test-classes "${1:-}"
}

case "${1:-jar}" in
  jar) jars ;;
  test) jars; tests "${2:-}" ;;
  *) echo "usage: build.sh jar | test [FILTER]" >&2; exit 2 ;;
esac
