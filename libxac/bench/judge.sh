#!/bin/sh
# judge.sh: issue I's checks on a bigger machine where nothing can be
# installed, in one command that fits a time budget and leaves one tarball.
#
#   make -C libxac judge-kit     # here: libxac/build/judge-kit, to carry along
#   sh libxac/bench/judge.sh --out DIR [--budget SECONDS] [--rounds N]
#
# It runs, in this order (the most wanted first, so a budget that runs out
# cuts the least wanted):
#   1. scale-check.sh, durable inserts, LIBXAC and Berkeley DB, at
#      1, 2, 8, 32 and 64 processes (issue I's durable targets);
#   2. scale-check.sh, nondurable inserts at 1, 16 and 64 processes,
#      random searches at 1 and 16, and searches beside inserts at 16 (8
#      processes search while 8 insert), LIBXAC, Berkeley DB and LMDB;
#   3. the library's tests (tests/run-tests.sh over the kit's tests/);
#   4. the serializability checker, 16 processes for 30 s (make
#      serial-long's settings, shorter);
#   5. scale-check.sh, nondurable inserts of 64,000 keys at 16 and 64
#      processes, LIBXAC and Berkeley DB: the steady state past the core
#      count (in step 2's 16,000 keys, 64 processes commit 250 inserts
#      each, too few to reach what a process does every 256th commit);
#   6. concurrency_test, tests A and B on 1 and 16 processes, 3 rounds,
#      nondurable (200,000 transactions, long enough for the speedup to
#      measure the CPUs rather than the processes' start) and durable
#      (4,000: group commit), then test C nondurable (its 10,000
#      transactions of a thousand passes over the page each), JSON lines
#      in DIR/concurrency.log;
#   7. concurrency_records (seeds 004's record database) at 2, 16 and 64
#      processes with the store's size held near 1,000 records (2 x 500,
#      16 x 64, 64 x 16): fine fcntl locking, LIBXAC taking pages afresh
#      and LIBXAC keeping them (--keep-pages), 3 repetitions each, in
#      rotating order, JSON lines in DIR/records.log.
# Each step runs under timeout(1) with what is left of the budget (default
# 540 s, under the 600 s a lent machine gives one command) and writes into
# DIR/<step>/; DIR/steps.log says how each ended.  Then DIR.tar.gz holds it
# all (a lent machine sends back few files: one tarball is one file).
#
# Options:
#   --out DIR        where everything goes (required; must not exist)
#   --budget S       seconds for all steps together [540]
#   --rounds N       scale-check rounds per table [2]
#   --kit DIR        what make judge-kit made [libxac/build/judge-kit]: bin/
#                    (tree_insert, bdb_insert, lmdb_insert, concurrency_test,
#                    concurrency_records; steps 6 and 7 are not run without
#                    their program), tests/ (the test
#                    programs), lib/ (the Debian libdb-5.3.so and liblmdb.so.0
#                    the programs were linked against, loaded first)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
libxac=$(cd "$here/.." && pwd)
out=
budget=540
rounds=2
kit=$libxac/build/judge-kit

die() { echo "judge: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:-}; shift 2 ;;
    --budget) budget=${2:-}; shift 2 ;;
    --rounds) rounds=${2:-}; shift 2 ;;
    --kit) kit=${2:-}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^set -eu$/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
    esac
done
[ -n "$out" ] || die "--out DIR is required"
[ ! -e "$out" ] || die "$out already exists"
for n in "$budget" "$rounds"; do
    case $n in ''|*[!0-9]*|0) die "not a positive whole number: $n" ;; esac
done
command -v timeout >/dev/null || die "timeout(1) is missing"
[ -x "$kit/bin/tree_insert" ] || die "$kit has no bin/tree_insert (make -C libxac judge-kit)"
kit=$(cd "$kit" && pwd)
LD_LIBRARY_PATH=$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
mkdir -p "$out"
start=$(date +%s)

# step NAME COMMAND...: run COMMAND with what is left of the budget, its
# output in $out/NAME.log, and say in steps.log how it ended.
step() {
    name=$1; shift
    left=$((budget - ($(date +%s) - start)))
    if [ "$left" -lt 10 ]; then
        echo "$name: not run, the budget was spent" >> "$out/steps.log"
        return 0
    fi
    t0=$(date +%s)
    set +e
    timeout -k 5 "$left" "$@" > "$out/$name.log" 2>&1
    rc=$?
    set -e
    case $rc in
    0) how="done" ;;
    124|137) how="cut at the budget (exit $rc)" ;;
    *) how="failed (exit $rc)" ;;
    esac
    echo "$name: $how in $(( $(date +%s) - t0 )) s" >> "$out/steps.log"
}

step durable sh "$here/scale-check.sh" --bin "$kit/bin" --out "$out/durable" \
    --durability durable --insert-systems "libxac bdb" \
    --procs "1 2 8 32 64" --read-procs "" --mixed-procs "" --rounds "$rounds"
step nondurable sh "$here/scale-check.sh" --bin "$kit/bin" --out "$out/nondurable" \
    --durability nondurable --procs "1 16 64" --read-procs "1 16" \
    --mixed-procs 16 --rounds "$rounds"
if [ -d "$kit/tests" ]; then
    # test_01_environ reads include/xac.h relative to the libxac directory.
    # shellcheck disable=SC2016 # $1 and $2 are sh -c's own arguments
    step tests sh -c 'cd "$1" && sh tests/run-tests.sh "$2"' sh "$libxac" "$kit/tests"
    step serial env XAC_SERIAL_PROCS=16 XAC_SERIAL_SECS=30 \
        sh "$libxac/tests/run-tests.sh" "$kit/tests" 'test_08*'
else
    echo "tests: not run, $kit/tests is missing" >> "$out/steps.log"
fi
step steady sh "$here/scale-check.sh" --bin "$kit/bin" --out "$out/steady" \
    --durability nondurable --insert-systems "libxac bdb" \
    --procs "16 64" --read-procs "" --mixed-procs "" --count 64000 \
    --rounds "$rounds"
if [ -x "$kit/bin/concurrency_test" ]; then
    # The five runs are one step: one log of JSON lines (progress lines
    # beside them), and a budget that runs out stops them together.
    # shellcheck disable=SC2016 # $1 and $2 are sh -c's own arguments
    step concurrency sh -c '
        for t in A B; do
            "$1/concurrency_test" --tests "$t" --procs 16 --rounds 3 \
                --txns 200000 --durability nondurable --dir "$2" || exit
            "$1/concurrency_test" --tests "$t" --procs 16 --rounds 3 \
                --txns 4000 --durability durable --dir "$2" || exit
        done
        "$1/concurrency_test" --tests C --procs 16 --rounds 3 \
            --durability nondurable --dir "$2"' \
        sh "$kit/bin" "${TMPDIR:-/tmp}"
else
    echo "concurrency: not run, $kit/bin has no concurrency_test" >> "$out/steps.log"
fi
if [ -x "$kit/bin/concurrency_records" ]; then
    # The order of the three rotates by one at each size, so that none of
    # them always runs first on a fresh machine.
    # shellcheck disable=SC2016 # $1 and $2 are sh -c's own arguments
    step records sh -c '
        order="fine afresh kept"
        for size in "2 500" "16 64" "64 16"; do
            set -- "$1" "$2" $size
            for how in $order; do
                case $how in
                fine) flags="--variant fine" ;;
                afresh) flags="--variant libxac" ;;
                kept) flags="--variant libxac --keep-pages" ;;
                esac
                # shellcheck disable=SC2086 # flags is a list of options
                "$1/concurrency_records" $flags --procs "$3" --nrec "$4" \
                    --reps 3 --dir "$2" || exit
            done
            order="${order#* } ${order%% *}"
        done' \
        sh "$kit/bin" "${TMPDIR:-/tmp}"
else
    echo "records: not run, $kit/bin has no concurrency_records" >> "$out/steps.log"
fi
{
    uname -a
    echo "cpus online: $(getconf _NPROCESSORS_ONLN)"
    echo "budget: $budget s, used $(( $(date +%s) - start )) s"
} > "$out/machine.txt"
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
cat "$out/steps.log"
echo "judge: $out.tar.gz"
