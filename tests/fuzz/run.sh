#!/bin/bash
# Builds the libFuzzer target for the config parser and rule resolution with
# clang (-fsanitize=fuzzer,address,undefined) and runs it.
#
#   tests/fuzz/run.sh [SECONDS] [LIBFUZZER-OPTION...]
#
# SECONDS defaults to 60 (the CI run); 0 only builds and replays the seeds. The seed corpus tests/fuzz/seeds is
# read and never written; new inputs go to a scratch corpus directory
# ($AG_FUZZ_WORK, default a temporary directory that is removed at exit unless
# AG_FUZZ_WORK is given). Crashes are written to $AG_FUZZ_ARTIFACTS (default
# the current directory) as crash-*/leak-*/timeout-*. Exit status 0 when the
# run found nothing; prints "N passed, N failed" for .ci/run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
CC=${CLANG:-clang}

if ! command -v "$CC" >/dev/null; then
        echo "clang not found (apt-get install clang)"; echo "0 passed, 0 failed, 1 skipped"; exit 77
fi
out=${AG_FUZZ_BUILD:-$(mktemp -d /tmp/agfuzz-build.XXXXXX)}
work=${AG_FUZZ_WORK:-}
cleanup() {
        [ -z "${AG_FUZZ_BUILD:-}" ] && rm -rf "$out"
        [ -z "${AG_FUZZ_WORK:-}" ] && [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
[ -n "$work" ] || work=$(mktemp -d /tmp/agfuzz-corpus.XXXXXX)
mkdir -p "$work" "$out"

# -fno-sanitize-recover: a UBSan report is fatal, so libFuzzer keeps the input.
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE"
flags="$flags -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wvla"
# shellcheck disable=SC2086
if ! "$CC" $flags -I"$top/lib/util" -I"$top/lib/config" -I"$top/lib/cgroup" -I"$top/lib/systemd" -I"$top/lib/login" -o "$out/fuzz-config" "$here/fuzz-config.c" \
        "$top/lib/config/config-value.c" "$top/lib/config/config-parse.c" "$top/lib/config/config-load.c" "$top/lib/config/policy.c" "$top/lib/util/util.c"; then
        echo "fuzz target failed to build"; echo "0 passed, 1 failed"; exit 1
fi

# Replay the seeds first (and every file of tests/corpus): any crash there is a
# plain regression, reported before the random run starts.
shopt -s nullglob
inputs=("$here"/seeds/*)
[ -d "$top/tests/corpus" ] && inputs+=("$top"/tests/corpus/*.conf)
if ! "$out/fuzz-config" "${inputs[@]}" >"$out/replay.log" 2>&1; then
        cat "$out/replay.log"; echo "seed replay failed"; echo "0 passed, 1 failed"; exit 1
fi

if [ "$secs" = 0 ]; then
        echo "built $out/fuzz-config; seeds replayed"; echo "1 passed, 0 failed"; exit 0
fi
status=0
"$out/fuzz-config" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=1024 \
        -dict="$here/config.dict" -artifact_prefix="${AG_FUZZ_ARTIFACTS:-./}" -print_final_stats=1 \
        "$@" "$work" "$here/seeds" >"$out/fuzz.log" 2>&1 || status=$?
tail -n 25 "$out/fuzz.log"
if [ "$status" -ne 0 ]; then
        grep -E 'ERROR|runtime error|invariant failed|Test unit written' "$out/fuzz.log" | head -n 20
        echo "0 passed, 1 failed"; exit 1
fi
echo "1 passed, 0 failed"
