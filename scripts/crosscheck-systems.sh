#!/usr/bin/env bash
# Cross-check the new stores' insert throughput against each system's own
# tool, on the same directory, one after the other (docs/benchmarks-systems.md,
# "Cross-checks"):
#   SQLite  the sqlite3 shell running N autocommit INSERTs into the same
#           WITHOUT ROWID table, WAL, synchronous FULL (or OFF), mmap_size
#   RocksDB db_bench fillrandom, 8-byte keys, 512-byte values, sync (or not)
#   PMDK    the hashmap_tx example libpmemobj-dev ships, one hm_tx_insert
#           (one transaction) per key, built here with a 30-line main
# against sqlite_insert, rocksdb_insert and pmemobj_insert with the same N
# (one process, random keys, 3 repetitions, the median).  Prints one line per
# pair: system, mode, tool ops/s, driver ops/s, driver/tool.
#
#   scripts/crosscheck-systems.sh [DIR] [N]      (default $TMPDIR or /tmp, 2000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/libxac/bin
parent=${1:-${TMPDIR:-/tmp}}
n=${2:-2000}
case $n in '' | *[!0-9]*) echo "crosscheck: N must be a number, not $n" >&2; exit 2 ;; esac
work=$(mktemp -d "$parent/xaclab-crosscheck.XXXXXX")
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
driver() { # PROGRAM MODE: the median throughput of 3 repetitions
  "$bin/$1" --count "$n" --reps 3 --mode "$2" --dir "$work" 2>/dev/null |
    awk -F'"samples":\\[' '/"metric":"throughput"/ { split($2, s, "]"); print s[1] }' |
    tr ',' '\n' | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f", v[int((NR + 1) / 2)] }'
}
line() { awk -v s="$1" -v m="$2" -v t="$3" -v d="$4" \
  'BEGIN { printf "%-8s %-9s tool %9.0f ops/s  driver %9.0f ops/s  driver/tool %.2f\n", s, m, t, d, d / t }'; }

# SQLite: the shell, one autocommit INSERT per key.
sqlite_tool() { # SYNCHRONOUS
  local db=$work/tool.sqlite
  rm -f "$db" "$db-wal" "$db-shm"
  sqlite3 "$db" "PRAGMA journal_mode=WAL;" \
    "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;" >/dev/null
  awk -v n="$n" -v s="$1" 'BEGIN {
      srand(20050520)
      printf "PRAGMA synchronous=%s;\nPRAGMA mmap_size=%d;\n", s, 2 * n * 544 + 67108864
      for (i = 0; i < n; i++)
        printf "INSERT OR REPLACE INTO kv VALUES(%d, randomblob(512));\n", int(rand() * 2^52) - 2^51
    }' >"$work/inserts.sql"
  local a b
  a=$(now); sqlite3 "$db" <"$work/inserts.sql" >/dev/null; b=$(now)
  rate "$n" "$a" "$b"
}
line sqlite wal_full "$(sqlite_tool FULL)" "$(driver sqlite_insert wal_full)"
line sqlite wal_off "$(sqlite_tool OFF)" "$(driver sqlite_insert wal_off)"

# RocksDB: db_bench fillrandom, one thread.
rocksdb_tool() { # SYNC
  rm -rf "$work/tool.rocksdb"
  db_bench --benchmarks=fillrandom --num="$n" --key_size=8 --value_size=512 --threads=1 \
    --sync="$1" --db="$work/tool.rocksdb" --seed=20050520 2>/dev/null |
    awk '/^fillrandom/ { for (i = 2; i <= NF; i++) if ($i == "ops/sec") print $(i - 1) }'
}
line rocksdb durable "$(rocksdb_tool 1)" "$(driver rocksdb_insert durable)"
line rocksdb nosync "$(rocksdb_tool 0)" "$(driver rocksdb_insert nosync)"

# PMDK: the shipped hashmap_tx example, one transaction per insert.
examples=/usr/share/doc/libpmemobj-dev/examples/hashmap
cat >"$work/hm.c" <<'CEOF'
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "hashmap_tx.h"
POBJ_LAYOUT_BEGIN(xc);
POBJ_LAYOUT_ROOT(xc, struct xc_root);
POBJ_LAYOUT_END(xc);
struct xc_root { TOID(struct hashmap_tx) map; };
int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    long n = atol(argv[2]);
    PMEMobjpool *pop = pmemobj_create(argv[1], POBJ_LAYOUT_NAME(xc), 64 << 20, 0600);
    if (pop == NULL) { perror(argv[1]); return 1; }
    TOID(struct xc_root) root = POBJ_ROOT(pop, struct xc_root);
    if (hm_tx_create(pop, &D_RW(root)->map, NULL) != 0) return 1;
    struct timespec a, b;
    uint64_t x = 20050520;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        if (hm_tx_insert(pop, D_RO(root)->map, x, OID_NULL) < 0) return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.0f\n", (double)n / ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9));
    pmemobj_close(pop);
    return 0;
}
CEOF
cc -O2 -o "$work/hm" "$work/hm.c" "$examples/hashmap_tx.c" -I"$examples" -lpmemobj
line pmemobj durable "$("$work/hm" "$work/tool.pmemobj" "$n")" "$(driver pmemobj_insert durable)"
