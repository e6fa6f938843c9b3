#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a scratch prefix as a user would (`cmake --install`), then checks what
# another project gets from it: the installed `tscope --version`; examples/ built out of tree with
# find_package(tscope); one example built with pkg-config alone. Each example must run and print
# a falling loss. The build's libraries may be static or shared. Usage: install_test.sh BUILD_DIR
# SOURCE_DIR
set -euo pipefail
build="$1" source="$2"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"

cmake --install "$build" --prefix "$prefix" > "$scratch/install.log"
test -f "$prefix/lib/cmake/tscope/tscopeConfig.cmake"
test -f "$prefix/lib/pkgconfig/tscope.pc"
test -f "$prefix/include/tscope/tscope.h"

version=$("$prefix/bin/tscope" --version)
echo "$version"
grep -q '^tscope [0-9]*\.[0-9]*\.[0-9]* (commit ' <<< "$version"
grep -q '^OpenBLAS ' <<< "$version"
grep -q '^oneDNN ' <<< "$version"
grep -q '^SLEEF ' <<< "$version"

# The loss a run prints at its first and last step must fall.
check_loss_falls() {
  "$1" 30 > "$scratch/run.log"
  awk '/^step [0-9]+ loss / { if (first == "") first = $4; last = $4 }
       END { if (first == "" || !(last < first)) { print "loss did not fall: " first " -> " last; exit 1 } }' \
    "$scratch/run.log"
}

cmake -S "$source/examples" -B "$scratch/with-cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" > "$scratch/configure.log"
cmake --build "$scratch/with-cmake" > "$scratch/build.log"
check_loss_falls "$scratch/with-cmake/tscope_example_logistic_regression"
check_loss_falls "$scratch/with-cmake/tscope_example_mlp"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# The RUNPATH is for shared libraries (BUILD_SHARED_LIBS) outside the loader's directories: a
# program linked by hand records where they are, as CMake does for the examples above.
# shellcheck disable=SC2046
c++ -O1 "$source/examples/mlp.cpp" -o "$scratch/mlp-pkg-config" $(pkg-config --cflags --libs tscope) \
  -Wl,-rpath,"$prefix/lib"
check_loss_falls "$scratch/mlp-pkg-config"
echo "install, find_package(tscope) and pkg-config: ok"
