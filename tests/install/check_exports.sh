#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks what the shared libraries of a BUILD_SHARED_LIBS build export (docs/architecture.md,
# "Shared libraries and exported symbols"): the public API, declared in include/tscope, and
# nothing declared only in src/.
#  1. Every exported symbol belongs to namespace tscope (functions, variables, vtables, typeinfo,
#     guard variables of an inline function's statics), or to libstdc++ (std::, __gnu_cxx::):
#     its templates instantiated for builtin or public types, e.g. std::vector<tscope::Variable>,
#     which the compiler emits with default visibility in each library that uses them because
#     libstdc++ declares namespace std so. Only -fvisibility-inlines-hidden would hide them, and it
#     would also give each library its own copy of an inline member function's statics.
#  2. Functions declared only in private headers are defined in their library (its full symbol
#     table) but not exported; public ones are exported.
# Usage: check_exports.sh BUILD_DIR
set -euo pipefail
build="$1"
failures=0

mapfile -t libraries < <(find "$build/src" -name 'libtscope_*.so' | sort)
if [[ ${#libraries[@]} -eq 0 ]]; then
  echo "no libtscope_<layer>.so under $build/src: is it a BUILD_SHARED_LIBS build?"
  exit 1
fi

# The namespace a mangled name belongs to: its special-name prefixes (vtable TV, typeinfo TI and
# its name TS, VTT TT, thread_local wrappers TH/TW, guard variable GV, reference temporary GR,
# thunks Th/Tv) and a local entity's enclosing function (Z) are skipped, then pointer and cv
# qualifiers of a typeinfo's type, then the nested-name marker N with its qualifiers.
owner_of_symbols() {
  awk '{
    name = $1
    if (name !~ /^_Z/) { print "c " name; next }
    rest = substr(name, 3)
    while (match(rest, /^(T[VTISHW]|GV|GR|Thn?[0-9]+_|Tvn?[0-9]+_n?[0-9]+_|Z)/))
      rest = substr(rest, RLENGTH + 1)
    sub(/^[PKRVO]*/, "", rest)
    sub(/^N[rVK]*[RO]?/, "", rest)
    if (rest ~ /^6tscope/) owner = "tscope"
    else if (rest ~ /^(St|S[absiod]|9__gnu_cxx)/) owner = "std"
    else owner = "other"
    print owner " " name
  }'
}

for library in "${libraries[@]}"; do
  exported=$(nm -D --defined-only --format=posix "$library" | owner_of_symbols)
  counts=$(awk '{ n[$1]++ } END { printf "%d tscope, %d std", n["tscope"], n["std"] }' <<< "$exported")
  outside=$(awk '$1 == "other" || $1 == "c" { print $2 }' <<< "$exported")
  if [[ -n "$outside" ]]; then
    echo "$(basename "$library") exports symbols outside namespace tscope and libstdc++:"
    c++filt <<< "$outside" | sed -n '1,40s/^/  /p'
    failures=$((failures + 1))
  fi
  echo "$(basename "$library"): $counts"
done

# `library|qualified name` of functions declared only in src/ private headers.
private_functions=(
  # src/ops/elementwise/simd_wide.h
  'libtscope_ops.so|tscope::ops::detail::wide_kernels_of_width'
  # src/runtime/trace_labels.h
  'libtscope_runtime.so|tscope::runtime::trace_node_labels'
  # src/onnx/reader.h
  'libtscope_onnx.so|tscope::onnx::parse_model'
  # src/profile/report_text_sections.h
  'libtscope_profile.so|tscope::profile::detail::render_epoch_section'
)
# And of public ones, declared in include/tscope.
public_functions=(
  # tscope/version.h
  'libtscope_core.so|tscope::version'
  # tscope/grad/grad.h
  'libtscope_grad.so|tscope::grad'
  # tscope/runtime/function.h
  'libtscope_runtime.so|tscope::function'
  # tscope/onnx/import.h
  'libtscope_onnx.so|tscope::onnx::import_model'
)
library_path() {
  local path
  path=$(find "$build/src" -name "$1" | head -n 1)
  [[ -n "$path" ]] || { echo "no $1 under $build/src" >&2; exit 1; }
  echo "$path"
}
# Whether the demangled symbol list $1 (`nm -C` output) holds function $2, whatever its parameters
# (and ABI tag: [abi:cxx11] on a function that returns std::string).
holds() { grep -E -- " $2(\[abi:[a-z0-9]+\])?\(" <<< "$1" > /dev/null; }
for entry in "${private_functions[@]}"; do
  library=$(library_path "${entry%%|*}") function="${entry#*|}"
  if ! holds "$(nm -C --defined-only "$library")" "$function"; then
    echo "$function is not defined in $(basename "$library"): update this list"
    failures=$((failures + 1))
  elif holds "$(nm -D -C --defined-only "$library")" "$function"; then
    echo "$(basename "$library") exports $function, which only a private header declares"
    failures=$((failures + 1))
  fi
done
for entry in "${public_functions[@]}"; do
  library=$(library_path "${entry%%|*}") function="${entry#*|}"
  if ! holds "$(nm -D -C --defined-only "$library")" "$function"; then
    echo "$(basename "$library") does not export $function, which a public header declares"
    failures=$((failures + 1))
  fi
done

if [[ $failures -gt 0 ]]; then
  echo "check_exports: $failures problem(s)"
  exit 1
fi
echo "exports: ${#libraries[@]} libraries export only namespace tscope and libstdc++ templates;" \
     "private functions hidden, public ones exported"
