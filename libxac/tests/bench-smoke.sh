#!/bin/sh
# bench-smoke.sh: run every storage and search-tree benchmark program in
# its --quick mode and check what it prints.
#
#   sh tests/bench-smoke.sh            (from libxac/, after make)
#   BIN=path/to/bin PYTHON=.venv/bin/python sh tests/bench-smoke.sh
#
# For each program: --quick into a fresh temporary directory (--dir) exits
# 0 and prints at least one line on stdout, every stdout line validates
# against contracts/result-format.schema.json (python with jsonschema) and has
# the expected suite and sut; a bad option exits 2 with nothing on stdout;
# --help exits 0; a suite-wide option that does not apply (a baseline given
# one LIBXAC tree, tree_blocks given --procs 2) exits 0 with nothing on
# stdout and a sentence on stderr.  Ends with "N passed, N failed"; exits 1 if any failed.
here=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-$here/../bin}
PYTHON=${PYTHON:-python3}
SCHEMA=${SCHEMA:-$here/../../contracts/result-format.schema.json}

if ! "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
    echo "bench-smoke: $PYTHON has no jsonschema module (set PYTHON to the repo .venv python)" >&2
    exit 1
fi
if [ ! -f "$SCHEMA" ]; then
    echo "bench-smoke: schema not found: $SCHEMA" >&2
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }

# validate FILE SUITE SUT: every line a valid result of that suite and sut
validate() {
    "$PYTHON" - "$SCHEMA" "$1" "$2" "$3" <<'PYEOF'
import json, sys
import jsonschema
schema_path, out_path, suite, sut = sys.argv[1:5]
with open(schema_path) as f:
    schema = json.load(f)
validator = jsonschema.Draft202012Validator(
    schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
errors = 0
lines = open(out_path).read().splitlines()
if not lines:
    print("  no result lines on stdout")
    sys.exit(1)
for n, line in enumerate(lines, 1):
    try:
        result = json.loads(line)
    except ValueError as e:
        print(f"  line {n}: not JSON: {e}: {line[:120]}")
        errors += 1
        continue
    for e in validator.iter_errors(result):
        print(f"  line {n}: {e.message[:200]} at {list(e.absolute_path)}")
        errors += 1
    if isinstance(result, dict):
        if result.get("suite") != suite or result.get("sut") != sut:
            print(f"  line {n}: suite/sut {result.get('suite')}/{result.get('sut')}, "
                  f"expected {suite}/{sut}")
            errors += 1
print(f"  {len(lines)} result lines, {errors} problems")
sys.exit(1 if errors else 0)
PYEOF
}

# check PROGRAM SUITE SUT [ARGS...]
check() {
    prog=$1 suite=$2 sut=$3
    shift 3
    name="$prog $*"
    exe="$BIN/$prog"
    if [ ! -x "$exe" ]; then
        fail "$name: $exe not built (run make)"
        return
    fi
    dir="$work/$prog"
    mkdir -p "$dir"
    "$exe" --quick --dir "$dir" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name --quick: exit status $rc"
        sed 's/^/  stderr: /' "$work/err" | tail -n 5
    elif validate "$work/out" "$suite" "$sut"; then
        pass "$name --quick: results valid"
    else
        fail "$name --quick: invalid results"
    fi
    leftover=$(ls -A "$dir")
    if [ -n "$leftover" ]; then
        fail "$name: left files behind in --dir: $leftover"
    fi
}

# skips PROGRAM [ARGS...]: exits 0, prints nothing on stdout and says why
# on stderr (a suite-wide option that does not apply to this program)
skips() {
    prog=$1
    shift
    exe="$BIN/$prog"
    [ -x "$exe" ] || return
    dir="$work/$prog"
    mkdir -p "$dir"
    "$exe" --quick --dir "$dir" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 0 ] && [ ! -s "$work/out" ] && grep -q "measures nothing" "$work/err"; then
        pass "$prog $*: measures nothing and says so"
    else
        fail "$prog $*: exit $rc, stdout $(wc -c <"$work/out") bytes"
    fi
}

# usage PROGRAM: --help exits 0, a bad option exits 2 without stdout
usage() {
    exe="$BIN/$1"
    [ -x "$exe" ] || return
    if "$exe" --help >/dev/null 2>&1; then
        pass "$1 --help"
    else
        fail "$1 --help: non-zero exit"
    fi
    "$exe" --no-such-option >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$work/out" ] && [ -s "$work/err" ]; then
        pass "$1 rejects a bad option with exit 2"
    else
        fail "$1 --no-such-option: exit $rc, stdout $(wc -c <"$work/out") bytes"
    fi
}

for p in storage_msync_fsync storage_journal storage_write_speed \
         storage_checksum storage_syscalls storage_timer storage_page_pool; do
    check "$p" storage os
    usage "$p"
done
for p in bdb_insert lmdb_insert; do
    sut=${p%%_*}
    check "$p" search-tree "$sut"
    check "$p" search-tree "$sut" --procs 2 --order sorted --mode nosync
    check "$p" search-tree "$sut" --procs 2 --durability nondurable --tree all
    skips "$p" --tree cobtree
    check "$p" search-tree "$sut" --op search --count 1000 --reps 1
    check "$p" search-tree "$sut" --op scan --count 1000 --reps 1
    check "$p" search-tree "$sut" --op mixed --procs 3 --count 400 --reps 1
    check "$p" search-tree "$sut" --op mixed --procs 1 --readers 0 --count 400 --reps 1
    usage "$p"
done

# SQLite allows several processes on one store.
check sqlite_insert search-tree sqlite
check sqlite_insert search-tree sqlite --procs 2 --order sorted --mode wal_off
check sqlite_insert search-tree sqlite --procs 2 --durability nondurable --tree all
skips sqlite_insert --tree cobtree
check sqlite_insert search-tree sqlite --op search --count 1000 --reps 1 --procs 2
check sqlite_insert search-tree sqlite --op scan --count 1000 --reps 1
check sqlite_insert search-tree sqlite --op mixed --procs 2 --count 400 --reps 1
usage sqlite_insert
# The systems that allow one process per store: --procs 2 measures nothing.
for p in pmemobj_insert rocksdb_insert; do
    sut=${p%%_*}
    check "$p" search-tree "$sut"
    check "$p" search-tree "$sut" --order sorted --tree all
    skips "$p" --tree cobtree
    skips "$p" --procs 2
    skips "$p" --op mixed --procs 2
    # Nobody searching: one process inserts into the loaded store.
    check "$p" search-tree "$sut" --op mixed --procs 1 --readers 0 --count 400 --reps 1
    check "$p" search-tree "$sut" --op search --count 1000 --reps 1
    check "$p" search-tree "$sut" --op scan --count 1000 --reps 1
    usage "$p"
done
check rocksdb_insert search-tree rocksdb --durability nondurable
skips pmemobj_insert --durability nondurable

for p in tree_insert tree_blocks; do
    check "$p" search-tree libxac --count 400 --reps 1
    usage "$p"
done
check tree_insert search-tree libxac --count 400 --reps 1 --procs 2 --tree all --durability durable
skips tree_blocks --procs 2

# passes: --quick searches each key 20 times; the results say so, count
# every search (one latency each) and keep the 100 most expensive of a
# pass, most expensive first; one pass carries no "passes"; with inserts
# --passes measures nothing and says so, as other options that do not
# apply.
passes_ok() {
    "$PYTHON" - "$work/out" "$1" "$2" <<'PYEOF'
import json, sys
path, passes, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
results = [json.loads(line) for line in open(path)]
bad = []
for r in results:
    got = r["params"].get("passes")
    if got != (passes if passes > 1 else None):
        bad.append(f"{r['metric']}: passes {got}")
    if r["metric"] == "search_latency" and len(r["samples"]) != 2 * count * passes:
        bad.append(f"search_latency: {len(r['samples'])} samples")
    if r["metric"] == "search_latency_top":
        s = r["samples"]
        if len(s) != min(100, count) or s != sorted(s, reverse=True):
            bad.append("search_latency_top: not the top of a pass, most expensive first")
print("  " + ("; ".join(bad) if bad else f"{len(results)} results as expected"))
sys.exit(1 if bad or not results else 0)
PYEOF
}
for n in 20 1; do
    args="--count 400 --reps 2 --tree btree --block-bytes 4096"
    [ "$n" = 1 ] && args="$args --passes 1"
    # shellcheck disable=SC2086 # args is a list of options
    if "$BIN/tree_blocks" --quick --dir "$work" $args >"$work/out" 2>"$work/err" &&
        passes_ok "$n" 400; then
        pass "tree_blocks --quick: $n search passes reported and counted"
    else
        fail "tree_blocks --quick: $n search passes"
    fi
done
skips tree_insert --passes 3

# --op mixed: the readers search while the writers insert; both rates, both
# latencies (every insert's), the readers' faults and the writers' aborts
# (one each per repetition); with --readers 0 the writers alone, no search
# results; --readers with another op measures nothing, and a mix without
# a writer is refused.
mixed_ok() { # READERS WRITERS
    "$PYTHON" - "$work/out" "$1" "$2" <<'PYEOF'
import json, sys
readers, writers = int(sys.argv[2]), int(sys.argv[3])
results = [json.loads(line) for line in open(sys.argv[1])]
by = {r["metric"]: r for r in results}
bad = [f"{r['metric']}: benchmark {r['benchmark']}, readers {r['params'].get('readers')}"
       for r in results if r["benchmark"] != "mixed" or r["params"].get("readers") != readers]
searching = ("search_throughput", "search_latency", "faults_per_search")
for m in ("insert_throughput",) + (searching if readers else ()):
    if m not in by:
        bad.append(f"no {m}")
if not readers:
    bad += [f"{m} with nobody searching" for m in searching if m in by]
if "throughput" in by:
    bad.append("a plain throughput beside the two rates")
if "insert_latency" not in by or len(by["insert_latency"]["samples"]) != 2 * 400:
    bad.append("insert_latency: not one per insert")
if "aborts" not in by or len(by["aborts"]["samples"]) != 2 * writers:
    bad.append("aborts: not one per writer per repetition")
print("  " + ("; ".join(bad) if bad else f"{len(results)} results as expected"))
sys.exit(1 if bad else 0)
PYEOF
}
if "$BIN/tree_insert" --quick --dir "$work" --op mixed --procs 3 --readers 1 \
    --count 400 --reps 2 >"$work/out" 2>"$work/err" && mixed_ok 1 2; then
    pass "tree_insert --op mixed: searches timed beside inserts, verified"
else
    fail "tree_insert --op mixed: $(tail -n 2 "$work/err" | tr '\n' ' ')"
fi
if "$BIN/tree_insert" --quick --dir "$work" --op mixed --procs 2 --readers 0 \
    --count 400 --reps 2 >"$work/out" 2>"$work/err" && mixed_ok 0 2; then
    pass "tree_insert --op mixed --readers 0: the writers alone on the loaded store, verified"
else
    fail "tree_insert --op mixed --readers 0: $(tail -n 2 "$work/err" | tr '\n' ' ')"
fi
skips tree_insert --readers 1
for bad in "--procs 1 --readers 1" "--procs 2 --readers 2"; do
    # shellcheck disable=SC2086 # bad is a list of options
    "$BIN/tree_insert" --quick --dir "$work" --op mixed $bad >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$work/out" ] && grep -q "insert" "$work/err"; then
        pass "tree_insert --op mixed $bad: refused with exit 2 and a sentence"
    else
        fail "tree_insert --op mixed $bad: exit $rc"
    fi
done

# judge.sh: refuses what it cannot use, and with a budget too short for its
# tables still ends in time with a tarball that says which steps ran.
judge=$here/../bench/judge.sh
mkdir -p "$work/kit/bin"
for p in tree_insert bdb_insert lmdb_insert concurrency_test concurrency_records; do ln -s "$BIN/$p" "$work/kit/bin/$p"; done
for bad in "--budget 0" "--rounds x" "--bogus" "--kit $work/no-kit"; do
    # shellcheck disable=SC2086 # bad is a list of options
    if sh "$judge" --out "$work/judge-bad" $bad >/dev/null 2>"$work/err"; then
        fail "judge.sh $bad: accepted"
    elif [ -e "$work/judge-bad" ] || [ ! -s "$work/err" ]; then
        fail "judge.sh $bad: refused, but left a directory or said nothing"
    else
        pass "judge.sh $bad: refused with a sentence, nothing written"
    fi
done
mkdir "$work/judge-there"
if sh "$judge" --out "$work/judge-there" --kit "$work/kit" >/dev/null 2>&1; then
    fail "judge.sh: wrote into a directory that exists"
else
    pass "judge.sh: refuses a directory that exists"
fi
if sh "$judge" --out "$work/judge" --kit "$work/kit" --budget 12 --rounds 1 \
    >"$work/out" 2>&1 &&
    grep -q '^durable: ' "$work/judge/steps.log" &&
    grep -q '^nondurable: not run, the budget was spent' "$work/judge/steps.log" &&
    grep -q '^tests: not run, .* is missing' "$work/judge/steps.log" &&
    grep -q '^steady: not run, the budget was spent' "$work/judge/steps.log" &&
    grep -q '^concurrency: not run, the budget was spent' "$work/judge/steps.log" &&
    grep -q '^records: not run, the budget was spent' "$work/judge/steps.log" &&
    tar -tzf "$work/judge.tar.gz" | grep -q '^judge/steps.log$' &&
    tar -tzf "$work/judge.tar.gz" | grep -q '^judge/machine.txt$'; then
    pass "judge.sh --budget 12: cut at its budget, every step accounted for, one tarball"
else
    fail "judge.sh --budget 12: $(cat "$work/judge/steps.log" 2>/dev/null | tr '\n' ' ')"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
