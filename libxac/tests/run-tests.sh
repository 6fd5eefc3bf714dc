#!/bin/sh
# run-tests.sh DIR [GLOB]: run every test binary in DIR whose name matches
# GLOB (default test_*), in lexicographic order
# (basic before complex), print each one's name and output, and finish with
# the total "N passed, N failed".  Exits non-zero if any check failed or a
# test did not finish with its own "N passed, N failed" line.
#
# XAC_TEST_WRAPPER, if set, is put in front of each test (make valgrind
# uses it).  LIBXAC's SIGSEGV handler must be allowed under AddressSanitizer.
dir=${1:?usage: run-tests.sh DIR [GLOB]}
glob=${2:-test_*}
ASAN_OPTIONS="allow_user_segv_handler=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
passed=0
failed=0
status=0
# ls and sort, not a glob: the order must be bytewise whatever the locale,
# and the names are the test programs this Makefile builds.
# shellcheck disable=SC2012
for t in $(ls "$dir" | LC_ALL=C sort); do
    # shellcheck disable=SC2254 # GLOB is meant to be a pattern
    case $t in $glob) ;; *) continue ;; esac
    [ -x "$dir/$t" ] && [ -f "$dir/$t" ] || continue
    echo "== $t"
    out=$($XAC_TEST_WRAPPER "$dir/$t" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$last" ]; then
        echo "$t: no result line (exit status $rc)"
        failed=$((failed + 1))
        status=1
        continue
    fi
    p=${last%% passed*}
    f=${last#*, }
    f=${f%% failed}
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ]; then
        [ "$f" -eq 0 ] && { echo "$t: exit status $rc"; failed=$((failed + 1)); }
        status=1
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
