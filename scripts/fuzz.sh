#!/usr/bin/env bash
# Builds and runs a libFuzzer target over touchbridge's decoders.
# Usage: scripts/fuzz.sh [target] [seconds]   (target: poseai, tuio, web or impress; default 300 s)
#   FUZZ_JOBS=n  parallel fuzzing jobs (default 1)
# Targets live in Tests/Fuzz/<Name>Fuzz.swift; their modules are compiled straight from Sources/ with
# swiftc -sanitize=fuzzer,address. Seeds: Tests/Fuzz/seeds/<target>/ and Tests/Corpus/<target>-hostile/
# (read only); what libFuzzer finds goes to .fuzz/<target>/corpus (not committed), crashes to
# .fuzz/<target>/crash-*. Exit status: 0 when the run found nothing.
# To add a target: a harness file, a case below, and a seeds directory. Every target is compiled
# with Tests/Fuzz/Invariants.swift, the checks they share.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-poseai}
seconds=${2:-300}
SWIFTC=${SWIFTC:-swiftc}
if ! command -v "$SWIFTC" >/dev/null && [ -x /opt/swift/usr/bin/swiftc ]; then SWIFTC=/opt/swift/usr/bin/swiftc; fi

case "$target" in
  poseai) modules=(TouchCore TouchWire); harness=Tests/Fuzz/PoseAIDecoderFuzz.swift ;;
  tuio) modules=(TouchCore TouchWire); harness=Tests/Fuzz/TUIODecoderFuzz.swift ;;
  web) modules=(TouchCore TouchWire); harness=Tests/Fuzz/WebMessageFuzz.swift ;;
  impress) modules=(TouchCore TouchImpress); harness=Tests/Fuzz/ImpressFuzz.swift ;;
  *) echo "fuzz: unknown target $target (known: poseai, tuio, web, impress)" >&2; exit 64 ;;
esac

out=.fuzz/$target
# The decoders' modules, built once for every target that uses them (TouchCore's instrumented -O build takes
# about a minute on 2 cores): each kept under .fuzz/modules with a key of its sources, the flags, the
# compiler and the keys of the modules before it; built again only when its key changes.
build=.fuzz/modules
mkdir -p "$build" "$out/corpus"
flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -I "$build" -L "$build")
key=$("$SWIFTC" --version 2>&1 | sha256sum | cut -c1-16)
for m in "${modules[@]}"; do
  # A module's sources, in its folders too (TouchCore keeps its layers in folders), in a stable order.
  mapfile -t sources < <(find Sources/"$m" -name '*.swift' | sort)
  key=$( { echo "$key ${flags[*]}"; printf '%s\n' "${sources[@]}"; cat "${sources[@]}"; } | sha256sum | cut -c1-16)
  if [ "$(cat "$build/$m.key" 2>/dev/null)" != "$key" ]; then
    rm -f "$build/$m.key"
    "$SWIFTC" "${flags[@]}" -module-name "$m" -emit-module -emit-module-path "$build/$m.swiftmodule" \
      -emit-library -static -o "$build/lib$m.a" "${sources[@]}"
    echo "$key" > "$build/$m.key"
  fi
done
# Static libraries link in reverse order of dependency: a module before the ones it uses.
libs=()
for ((i=${#modules[@]}-1; i>=0; i--)); do libs+=("-l${modules[$i]}"); done
"$SWIFTC" "${flags[@]}" -module-name Fuzz "$harness" Tests/Fuzz/Invariants.swift "${libs[@]}" -o "$out/fuzz-$target"

seeds=()
for d in Tests/Fuzz/seeds/$target Tests/Corpus/$target-hostile; do [ -d "$d" ] && seeds+=("$d"); done
echo "fuzz: $target for $seconds s (seeds: ${seeds[*]})"
# Swift's own crash backtracer and ASan fight over the dying process; libFuzzer reports the crash.
export SWIFT_BACKTRACE=enable=no
cd "$out"
dict=()
[ -f "../../Tests/Fuzz/$target.dict" ] && dict=(-dict="../../Tests/Fuzz/$target.dict")
jobs=()
[ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS")
exec ./fuzz-"$target" -max_total_time="$seconds" -max_len=65600 -timeout=10 -rss_limit_mb=2048 \
  "${dict[@]}" "${jobs[@]}" -print_final_stats=1 corpus "${seeds[@]/#/../../}"
