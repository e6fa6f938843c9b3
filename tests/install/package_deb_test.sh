#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the .deb from a build directory (cpack, into a scratch directory), checks its name and
# control fields, unpacks it into a scratch root (dpkg -x) and runs the packaged CLI from there.
# Usage: package_deb_test.sh BUILD_DIR
set -euo pipefail
build="$1"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cpack --config "$build/CPackConfig.cmake" -B "$scratch/out" > "$scratch/cpack.log"
deb=("$scratch"/out/tensorscope_*_amd64.deb)
test -f "${deb[0]}" || { echo "no tensorscope_<version>_amd64.deb"; ls "$scratch/out"; exit 1; }
echo "built $(basename "${deb[0]}")"
test "$(dpkg-deb -f "${deb[0]}" Package)" = tensorscope
depends=$(dpkg-deb -f "${deb[0]}" Depends)
echo "Depends: $depends"
for needed in libdnnl libopenblas libsleef libprotobuf libonnx libfmt; do
  grep -q "$needed" <<< "$depends" || { echo "Depends lacks $needed"; exit 1; }
done

dpkg -x "${deb[0]}" "$scratch/root"
for file in usr/bin/tscope usr/include/tscope/tscope.h usr/lib/cmake/tscope/tscopeConfig.cmake \
            usr/lib/pkgconfig/tscope.pc; do
  test -e "$scratch/root/$file" || { echo "missing /$file"; exit 1; }
done
# A static build packages the archives, a shared one (BUILD_SHARED_LIBS) the libraries, which the
# packaged CLI finds next to it (its RUNPATH, $ORIGIN/../lib).
test -e "$scratch/root/usr/lib/libtscope_core.a" || test -e "$scratch/root/usr/lib/libtscope_core.so" ||
  { echo "missing /usr/lib/libtscope_core.a or .so"; exit 1; }
"$scratch/root/usr/bin/tscope" --version | grep -q '^tscope '
"$scratch/root/usr/bin/tscope" ops > /dev/null
echo "package: ok"
