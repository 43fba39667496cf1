#!/usr/bin/env bash
# Instructions per request, counted by callgrind (the same count run after
# run, however busy the machine), for each review at /mutate and /validate,
# in this tree and in a baseline revision built beside it:
#
#   bench/instructions.sh [BASELINE_REV] [REVIEWS...]
#
# BASELINE_REV: default 69a6602; "none" measures this tree alone.
# Reviews: gpu-pod gpu-deployment plain-pod big-pod (default: all four);
# big-pod is written by build/bench/make_inputs.
# BENCH_REPEAT=N: requests counted per review and endpoint (default 20).
# BENCH_BUILD_DIR: this tree's build (default build); the baseline is built
# from `git archive` in $BENCH_BUILD_DIR/instructions-baseline/REV, once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

baseline=${1:-69a6602}
shift || true
reviews=("$@")
[ ${#reviews[@]} -gt 0 ] || reviews=(gpu-pod gpu-deployment plain-pod big-pod)
repeat=${BENCH_REPEAT:-20}
build=${BENCH_BUILD_DIR:-build}
cmake_flags=(-DCMAKE_BUILD_TYPE=Release -DAIADMIT_BUILD_TESTS=OFF -DAIADMIT_BUILD_E2E=OFF)
command -v ccache >/dev/null && cmake_flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
command -v valgrind >/dev/null || { echo "valgrind is missing (apt-get install valgrind)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# This tree: its usual build, only the driver and the input generator.
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target review_instructions make_inputs >/dev/null
"$build/bench/make_inputs" "$work"
inputs=()
for review in "${reviews[@]}"; do
  if [ -f "bench/reviews/$review.json" ]; then inputs+=("$root/bench/reviews/$review.json")
  elif [ -f "$work/$review.json" ]; then inputs+=("$work/$review.json")
  else echo "no review $review" >&2; exit 2; fi
done

# The baseline: its own sources and profiles, this tree's driver and reviews.
baseline_driver=""
if [ "$baseline" != none ]; then
  sha=$(git rev-parse --verify "$baseline^{commit}")
  dir="$build/instructions-baseline/${sha:0:12}"
  if [ ! -f "$dir/src/bench/review_instructions.cpp" ]; then
    rm -rf "$dir" && mkdir -p "$dir/src"
    git archive "$sha" | tar -x -C "$dir/src"
    cp bench/review_instructions.cpp bench/review_instructions.cmake "$dir/src/bench/"
    grep -q review_instructions.cmake "$dir/src/bench/CMakeLists.txt" ||
      echo 'include(${CMAKE_CURRENT_SOURCE_DIR}/review_instructions.cmake)' >>"$dir/src/bench/CMakeLists.txt"
  fi
  cmake -S "$dir/src" -B "$dir/build" "${cmake_flags[@]}" >/dev/null
  echo "building the baseline ${sha:0:12} in $dir/build" >&2
  cmake --build "$dir/build" -j2 --target review_instructions >/dev/null
  baseline_driver="$dir/build/bench/review_instructions"
fi

grouped() { sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta' <<<"$1"; }

# count NAME DRIVER: one callgrind run; writes NAME.counts ("review endpoint count"),
# each the instructions of one request.
count() {
  local name=$1 driver=$2
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$work/$name.cg" \
    "$driver" "$repeat" "${inputs[@]}" >"$work/$name.answers" 2>"$work/$name.valgrind" ||
    { cat "$work/$name.valgrind" >&2; exit 1; }
  # In dump order: NAME.cg.10 comes after NAME.cg.9, not after NAME.cg.1.
  for dump in $(printf '%s\n' "$work/$name.cg".* | sort -V); do
    awk -v repeat="$repeat" '
      /^desc: Trigger: Client Request: / { sub(/^desc: Trigger: Client Request: /, ""); label = $0 }
      /^(summary|totals):/ { total = $2 }
      END { if (label != "") printf "%s %d\n", label, total / repeat }' "$dump"
  done >"$work/$name.counts"
}

count current "$build/bench/review_instructions"
[ -z "$baseline_driver" ] || count baseline "$baseline_driver"

echo
echo "instructions per request (callgrind, mean of $repeat)"
if [ -z "$baseline_driver" ]; then
  printf '| %-15s | %-8s | %14s |\n' review endpoint "this tree"
  echo "|---|---|---|"
  while read -r review endpoint n; do
    printf '| %-15s | %-8s | %14s |\n' "$review" "$endpoint" "$(grouped "$n")"
  done <"$work/current.counts"
  exit 0
fi
printf '| %-15s | %-8s | %14s | %14s | %6s |\n' review endpoint "${baseline}" "this tree" ratio
echo "|---|---|---|---|---|"
while read -r review endpoint n; do
  base=$(awk -v r="$review" -v e="$endpoint" '$1 == r && $2 == e {print $3}' "$work/baseline.counts")
  printf '| %-15s | %-8s | %14s | %14s | %6s |\n' "$review" "$endpoint" "$(grouped "$base")" \
    "$(grouped "$n")" "$(awk -v a="$n" -v b="$base" 'BEGIN {printf "%.2f", a / b}')"
done <"$work/current.counts"
# Different answers (a rule added since) are worth knowing beside the counts.
if ! diff -q <(sed 's/ bytes=.*//' "$work/baseline.answers") \
  <(sed 's/ bytes=.*//' "$work/current.answers") >/dev/null; then
  echo
  echo "the decisions differ:"
  diff "$work/baseline.answers" "$work/current.answers" || true
fi
