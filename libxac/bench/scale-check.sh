#!/bin/sh
# scale-check.sh: the scaling table of issue I, in one command: LIBXAC's
# B+-tree against Berkeley DB and LMDB at many process counts, durable
# and nondurable inserts, random searches, and searches beside inserts, in
# rounds with the systems in rotating order, every run's results kept.
#
#   sh bench/scale-check.sh --out DIR [options]
#
# Options (defaults in brackets):
#   --out DIR          where results go (required; created; must be empty)
#   --bin DIR          the benchmark programs [the bin/ next to bench/]
#   --libxac L=DIR     also run tree_insert from DIR as system "L" (e.g.
#                      base=/tmp/base/bin, to set a build beside this one);
#                      repeatable
#   --procs "LIST"     process counts for inserts ["1 4 16 32 64"]
#   --read-procs "L"   process counts for searches ["1 4 16"]
#   --mixed-procs "L"  process counts for searches beside inserts (--op
#                      mixed, nondurable: half the processes search the
#                      loaded keys while the others insert as many new
#                      ones; and the same writers again with nobody
#                      searching, --readers 0, their baseline; "" for
#                      none) ["4 16"]
#   --rounds N         rounds [3]
#   --count N          keys inserted per run [16000]
#   --search-count N   keys loaded for the searches [64000]
#   --mixed-count N    keys loaded, and as many inserted, in a mixed run
#                      [16000]
#   --durability "L"   "durable nondurable" or one of them [both]
#   --insert-systems "L"  which systems run the inserts, by name (libxac,
#                      bdb, lmdb, the --libxac names) [all]; searches
#                      always run every system
#   --dir DIR          scratch directory for the stores [$TMPDIR or /tmp]
#   --quick            2,000 keys, procs "1 4", read procs "1", mixed
#                      procs "2", 1 round:
#                      checks that everything runs
#
# A run is one program, one configuration, one repetition (--reps 1,
# --no-verify).  In round r the systems of a cell (one durability and
# process count) run in an order rotated by r, so drift in the machine's
# speed does not favour one system.  Writes:
#   DIR/results.jsonl   every result line of every run (xaclab result
#                       format), with "round" and "system" added to params
#   DIR/runs.log        each run's command, exit status and stderr
#   DIR/machine.txt     uname, CPUs, memory, the file system under --dir
#   DIR/summary.md      per cell: median and range of throughput over
#                       rounds, each round's ratio to Berkeley DB (same
#                       round), LIBXAC's aborts per insert and retries, the
#                       slowest 0.1 % of operations (p99.9 latency); per
#                       mixed cell both rates, their ratios to Berkeley DB,
#                       each system's inserts beside searches over its
#                       inserts with nobody searching, and LIBXAC's faults
#                       per search
# Needs python3 (standard library only) for the summary.  Programs that
# link Berkeley DB or LMDB need their shared libraries: copy them along
# and set LD_LIBRARY_PATH if the machine has none.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../bin
out=
extra=
procs="1 4 16 32 64"
read_procs="1 4 16"
mixed_procs="4 16"
rounds=3
count=16000
search_count=64000
mixed_count=16000
durabilities="durable nondurable"
insert_systems=
scratch=${TMPDIR:-/tmp}

die() { echo "scale-check: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --libxac) extra="$extra $2"; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --read-procs) read_procs=$2; shift 2 ;;
    --mixed-procs) mixed_procs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --search-count) search_count=$2; shift 2 ;;
    --mixed-count) mixed_count=$2; shift 2 ;;
    --durability) durabilities=$2; shift 2 ;;
    --insert-systems) insert_systems=$2; shift 2 ;;
    --dir) scratch=$2; shift 2 ;;
    --quick) count=2000; search_count=2000; mixed_count=2000
             procs="1 4"; read_procs=1; mixed_procs=2; rounds=1; shift ;;
    -h|--help) sed -n '2,55p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
    esac
done
[ -n "$out" ] || die "--out DIR is required"
for n in $rounds $count $search_count $mixed_count $procs $read_procs \
    $mixed_procs; do
    case $n in ''|*[!0-9]*) die "not a whole number: $n" ;; esac
done
for n in $mixed_procs; do
    [ "$n" -ge 2 ] || die "--mixed-procs $n: a mixed run needs 2 processes or more"
done
for d in $durabilities; do
    case $d in durable|nondurable) ;; *) die "unknown durability $d" ;; esac
done
for p in tree_insert bdb_insert lmdb_insert; do
    [ -x "$bin/$p" ] || die "$bin/$p is missing (make -C libxac first)"
done
# System name=program path; the extra LIBXAC builds first.
systems="libxac=$bin/tree_insert bdb=$bin/bdb_insert lmdb=$bin/lmdb_insert"
for x in $extra; do
    name=${x%%=*} dir=${x#*=}
    case $name in ''|*[!a-z0-9_]*) die "--libxac wants NAME=DIR, NAME a-z0-9_" ;; esac
    [ -x "$dir/tree_insert" ] || die "$dir/tree_insert is missing"
    systems="$name=$dir/tree_insert $systems"
done
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || die "$out is not empty"
mkdir -p "$scratch"

{
    uname -a
    echo "cpus online: $(getconf _NPROCESSORS_ONLN)"
    grep -m1 'model name' /proc/cpuinfo || true
    grep MemTotal /proc/meminfo || true
    df -T "$scratch" | tail -1
    echo "vm.max_map_count: $(cat /proc/sys/vm/max_map_count)"
} > "$out/machine.txt"

# The systems of $insert_systems (all if empty) among NAME=PROGRAM ...
inserting() {
    [ -z "$insert_systems" ] && { echo "$@"; return; }
    for s in "$@"; do
        for n in $insert_systems; do
            [ "${s%%=*}" = "$n" ] && printf '%s ' "$s"
        done
    done
}

# The systems of a cell rotated left by $1.
rotate() {
    k=$1; shift
    n=$#
    i=0
    while [ $i -lt "$n" ]; do
        j=$(( (i + k) % n + 1 ))
        eval "printf '%s ' \"\${$j}\""
        i=$((i + 1))
    done
}

# run ROUND SYSTEM PROGRAM ARGS...: one run, its results tagged.
run() {
    r=$1 sys=$2 prog=$3
    shift 3
    echo "== round $r $sys: $prog $*" >> "$out/runs.log"
    set +e
    "$prog" "$@" --reps 1 --no-verify --dir "$scratch" \
        > "$out/run.out" 2>> "$out/runs.log"
    rc=$?
    set -e
    echo "   exit $rc" >> "$out/runs.log"
    python3 -c '
import json, sys
r, s = int(sys.argv[1]), sys.argv[2]
for line in open(sys.argv[3]):
    if line.strip():
        d = json.loads(line)
        d["params"]["round"], d["params"]["system"] = r, s
        print(json.dumps(d))' "$r" "$sys" "$out/run.out" >> "$out/results.jsonl"
    rm -f "$out/run.out"
    printf '.'
}

# mode_args SYSTEM DURABILITY: the one mode each baseline runs.
mode_args() {
    case $1:$2 in
    bdb:nondurable) echo "--mode not_durable" ;;
    lmdb:nondurable) echo "--mode nosync" ;;
    *) echo "--durability $2" ;;
    esac
}

# every_system ROUND OP COUNT HOW PROCS...: OP, nondurable, on every system
# at each process count, the systems rotated by the round.  HOW "alone":
# a mixed cell's writers (PROCS less half) with nobody searching.
every_system() {
    round=$1 op=$2 keys=$3 how=$4
    shift 4
    for n in "$@"; do
        who="--procs $n"
        [ "$how" = alone ] && who="--procs $((n - n / 2)) --readers 0"
        # shellcheck disable=SC2086
        for s in $(rotate "$round" $systems); do
            # shellcheck disable=SC2046
            run "$round" "${s%%=*}" "${s#*=}" --op "$op" --count "$keys" \
                $who $(mode_args "${s%%=*}" nondurable)
        done
    done
}

# The lists and the mode arguments below are split into words on purpose.
r=1
while [ "$r" -le "$rounds" ]; do
    printf 'round %s ' "$r"
    for d in $durabilities; do
        for p in $procs; do
            # shellcheck disable=SC2046,SC2086
            for s in $(rotate "$r" $(inserting $systems)); do
                # shellcheck disable=SC2046
                run "$r" "${s%%=*}" "${s#*=}" --op insert --count "$count" \
                    --procs "$p" $(mode_args "${s%%=*}" "$d")
            done
        done
    done
    # shellcheck disable=SC2086
    every_system "$r" search "$search_count" - $read_procs
    # shellcheck disable=SC2086
    every_system "$r" mixed "$mixed_count" - $mixed_procs
    # shellcheck disable=SC2086
    every_system "$r" mixed "$mixed_count" alone $mixed_procs
    echo
    r=$((r + 1))
done

python3 - "$out/results.jsonl" > "$out/summary.md" <<'PYEOF'
import json, statistics, sys
from collections import defaultdict

# (op, dur, procs, readers: -1 but for mixed) -> sys -> round -> metrics
cells = defaultdict(lambda: defaultdict(dict))
for line in open(sys.argv[1]):
    d = json.loads(line)
    p = d["params"]
    key = (d["benchmark"], p.get("durability", "?"), p["procs"], p.get("readers", -1))
    cells[key][p["system"]].setdefault(p["round"], {})[d["metric"]] = d

def med_range(v):
    return f"{statistics.median(v):,.0f} ({min(v):,.0f}–{max(v):,.0f})" if v else "–"

def pct(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")

print("# Scaling table\n")
print("Medians over rounds, (min–max); ratios are LIBXAC ÷ Berkeley DB of the same round; "
      "copies/commit is the mean over LIBXAC's processes of the pages each copied into its "
      "own memory per committed insert, (new) those of them into a page of its memory it did "
      "not have yet (the dear ones); p99.9 is the slowest 0.1 % of operations in ms.\n")
def first(rounds, metric):
    return {r: m[metric]["samples"][0] for r, m in rounds.items() if metric in m}

def mixed_cell(dur, procs, readers, systems, alone):
    """Searches beside inserts: both rates, each round's ratios to Berkeley DB's, and the
    inserts over the same system's inserts with nobody searching (alone: that cell)."""
    print(f"## mixed, {dur}, {procs} processes ({readers} searching, "
          f"{procs - readers} inserting)\n")
    print("| system | inserts/s | searches/s | inserts ÷ bdb by round | searches ÷ bdb by round "
          "| inserts ÷ nobody searching, by round | faults/search | aborts/insert |")
    print("|---|---|---|---|---|---|---|---|")
    bdb = systems.get("bdb", {})
    bins, bsrch = first(bdb, "insert_throughput"), first(bdb, "search_throughput")
    for name in sorted(systems):
        rounds = systems[name]
        ins, srch = first(rounds, "insert_throughput"), first(rounds, "search_throughput")
        solo = first(alone.get(name, {}), "insert_throughput")
        faults = [statistics.mean(m["faults_per_search"]["samples"])
                  for m in rounds.values() if "faults_per_search" in m]
        ab = [sum(m["aborts"]["samples"]) / m["aborts"]["params"]["count"]
              for m in rounds.values() if "aborts" in m]
        def ratios(mine, theirs):
            return " ".join(f"{mine[r] / theirs[r]:.2f}" for r in sorted(mine)
                            if theirs.get(r)) or "–"
        print(f"| {name} | {med_range(list(ins.values()))} | {med_range(list(srch.values()))} | "
              f"{ratios(ins, bins)} | {ratios(srch, bsrch)} | {ratios(ins, solo)} | "
              f"{' '.join(f'{x:.3f}' for x in faults) or '–'} | "
              f"{' '.join(f'{x:.2f}' for x in ab) or '–'} |")
    print()

for (op, dur, procs, readers) in sorted(cells):
    systems = cells[(op, dur, procs, readers)]
    if op == "mixed" and readers > 0:
        alone = cells.get((op, dur, procs - readers, 0), {})
        mixed_cell(dur, procs, readers, systems, alone)
    if op == "mixed":  # the writers alone are a column of their mixed cell
        continue
    print(f"## {op}, {dur}, {procs} processes\n")
    print("| system | ops/s | ÷ bdb by round | aborts/insert | retries max | copies/commit (new) "
          "| p99.9 ms | p99.9 ÷ bdb |")
    print("|---|---|---|---|---|---|---|---|")
    bdb = systems.get("bdb", {})
    for name in sorted(systems):
        rounds = systems[name]
        thr = [m["throughput"]["samples"][0] for m in rounds.values() if "throughput" in m]
        ratios = [rounds[r]["throughput"]["samples"][0] / bdb[r]["throughput"]["samples"][0]
                  for r in sorted(rounds) if "throughput" in rounds[r] and r in bdb
                  and "throughput" in bdb[r]]
        ab = [sum(m["aborts"]["samples"]) / m["aborts"]["params"]["count"]
              for m in rounds.values() if "aborts" in m]
        rmax = [max(m["retries_max"]["samples"]) for m in rounds.values() if "retries_max" in m]
        copies = [(statistics.mean(m["page_copies_per_commit"]["samples"]),
                   statistics.mean(m["new_pages_per_commit"]["samples"])
                   if "new_pages_per_commit" in m else None)
                  for m in rounds.values() if "page_copies_per_commit" in m]
        def p999(m):
            lat = m.get(f"{op}_latency", {})
            return pct(lat["samples"], 0.999) / 1000 if "samples" in lat else None
        lat = [p999(rounds[r]) for r in sorted(rounds) if p999(rounds[r]) is not None]
        lat_ratio = [p999(rounds[r]) / p999(bdb[r]) for r in sorted(rounds)
                     if p999(rounds[r]) is not None and r in bdb and p999(bdb[r])]
        print(f"| {name} | {med_range(thr)} | {' '.join(f'{x:.2f}' for x in ratios) or '–'} | "
              f"{' '.join(f'{x:.2f}' for x in ab) or '–'} | {' '.join(str(int(x)) for x in rmax) or '–'} | "
              f"{' '.join(f'{c:.2f}' + ('' if n is None else f' ({n:.2f})') for c, n in copies) or '–'} | "
              f"{' '.join(f'{x:.1f}' for x in lat) or '–'} | "
              f"{' '.join(f'{x:.2f}' for x in lat_ratio) or '–'} |")
    print()
PYEOF
echo "scale-check: results in $out (summary.md, results.jsonl, runs.log)"
