#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/busy-machine.sh -- run a command on a busy machine: a PostgreSQL 15 on huge pages
# serving parallel queries, and a neighbour that takes and returns huge pages in a loop.
#
#   scripts/busy-machine.sh BUILD_DIR COMMAND [ARGS...]
#       e.g.  scripts/busy-machine.sh build-test bash scripts/test.sh
#
# Server developers run test suites where their servers run.  CI runs one whole suite pass
# this way to show that the tests judge only what they made (tests/fixture.h): beside them,
#   - PostgreSQL 15 (Debian's package, installed by scripts/deps.sh postgres) with
#     huge_pages=on and shared_buffers=64MB, its own throw-away cluster on a Unix socket in a
#     temporary directory, and pgbench running a parallel query on 2 clients for as long as
#     the command runs: every query starts parallel workers, which create and drop a dynamic
#     shared memory segment in /dev/shm (PostgreSQL.*), ten queries a second;
#   - hpt_churn (tests/churn.c, from BUILD_DIR) taking and returning 8 huge pages, a SysV
#     SHM_HUGETLB segment and a /dev/shm file in a loop.
# It reserves the huge pages these two need on top of what is free (PostgreSQL's own
# shared_memory_size_in_huge_pages, the churner's 9, and 8 to spare), so the command finds
# the pool as free as before, and gives them back at the end.  Its exit status is the
# command's; it fails before running the command when the neighbours cannot start, and after,
# when they did not stay busy (no parallel query completed, the server went down).  Runs as
# root (the server runs as the postgres user: initdb refuses root).  About 15 s more than the
# command.
set -euo pipefail

usage() {
	echo "usage: $0 BUILD_DIR COMMAND [ARGS...]" >&2
	exit 2
}
(($# >= 2)) || usage
build=$(cd "$1" 2>/dev/null && pwd) || usage
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
churn=$build/tests/hpt_churn
pgbin=/usr/lib/postgresql/15/bin
hp=/sys/kernel/mm/hugepages/hugepages-2048kB

note() { printf 'busy-machine: %s\n' "$*"; }
die() {
	printf 'busy-machine: FATAL: %s\n' "$*" >&2
	exit 1
}
((EUID == 0)) || die "run me as root (I reserve huge pages and run PostgreSQL as the postgres user)"
[[ -x $churn ]] || die "$churn is missing: build the tests first (cmake --build $build)"
[[ -d $hp ]] || die "this kernel has no 2 MiB huge pages ($hp)"

bash "$root/scripts/deps.sh" postgres
id postgres >/dev/null 2>&1 || die "no postgres user (the postgresql-15 package makes it)"

# A directory the postgres user can reach whatever the checkout's parents allow.
work=$(mktemp -d /tmp/hpshm-busy.XXXXXX)
chown postgres: "$work"
chmod 700 "$work"
data=$work/data
orig_nr=$(<"$hp/nr_hugepages")
bench_pid=
churn_pid=

as_pg() { runuser -u postgres -- env -i PATH=/usr/bin:/bin HOME="$work" LANG=C LC_ALL=C "$@"; }
pg_running() { [[ -f $data/postmaster.pid ]] && kill -0 "$(head -n 1 "$data/postmaster.pid")" 2>/dev/null; }

cleanup() {
	local rc=$? pid
	set +e
	for pid in $bench_pid $churn_pid; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	pg_running && as_pg "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1
	rm -rf "$work"
	echo "$orig_nr" >"$hp/nr_hugepages"
	note "pool back to nr_hugepages=$(<"$hp/nr_hugepages") (was $orig_nr), free=$(<"$hp/free_hugepages")"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_pg "$pgbin/initdb" -D "$data" -A trust -U postgres >"$work/initdb.log" 2>&1 ||
	die "initdb failed: $(tail -n 5 "$work/initdb.log")"
cat >>"$data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$work'
port = 5497
huge_pages = on
shared_buffers = 64MB
dynamic_shared_memory_type = posix
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
CONF
need=$(as_pg "$pgbin/postgres" -D "$data" -C shared_memory_size_in_huge_pages)
[[ $need =~ ^[0-9]+$ ]] || die "PostgreSQL did not say how many huge pages it needs: $need"
extra=$((need + 9 + 8))
echo $((orig_nr + extra)) >"$hp/nr_hugepages"
note "reserved $extra more 2 MiB pages for PostgreSQL ($need) and the churner (9): nr_hugepages=$(<"$hp/nr_hugepages") free=$(<"$hp/free_hugepages")"
(($(<"$hp/nr_hugepages") >= orig_nr + extra)) || die "the kernel gave fewer pages than asked (memory short or fragmented)"

as_pg "$pgbin/pg_ctl" -D "$data" -l "$work/server.log" -w start >/dev/null ||
	die "PostgreSQL did not start: $(tail -n 5 "$work/server.log")"
pm=$(head -n 1 "$data/postmaster.pid")
grep -q '^KernelPageSize: *2048 kB' "/proc/$pm/smaps" ||
	die "PostgreSQL's shared memory is not on 2 MiB pages (huge_pages=on should have refused to start)"
psql_() { as_pg /usr/bin/psql -X -q -h "$work" -p 5497 -U postgres -d postgres "$@"; }
psql_ -c "create table busy as select g as id, md5(g::text) as pad from generate_series(1, 200000) g" ||
	die "could not fill the table"
psql_ -c "analyze busy"
echo "select count(*), max(pad) from busy;" >"$work/parallel.sql"
chown postgres: "$work/parallel.sql"
plan=$(psql_ -At -c "explain select count(*), max(pad) from busy")
[[ $plan == *Gather* ]] || die "the query does not run in parallel: $plan"
as_pg "$pgbin/pgbench" -n -h "$work" -p 5497 -U postgres -f "$work/parallel.sql" -c 2 -R 10 -T 86400 postgres \
	>"$work/pgbench.log" 2>&1 &
bench_pid=$!
"$churn" 8 >"$work/churn.log" 2>&1 &
churn_pid=$!
sleep 2
kill -0 "$bench_pid" 2>/dev/null || die "pgbench stopped at once: $(tail -n 5 "$work/pgbench.log")"
kill -0 "$churn_pid" 2>/dev/null || die "the churner stopped at once: $(cat "$work/churn.log")"
dsm=$(grep -c '' <(ls /dev/shm | grep '^PostgreSQL\.') || true)
note "PostgreSQL 15 (pid $pm) on $need huge pages runs parallel queries (/dev/shm has $dsm PostgreSQL.* now); the churner (pid $churn_pid) takes and returns 8 pages"

set +e
"$@"
rc=$?
set -e

fail=0
queries=$(psql_ -At -c "select xact_commit from pg_stat_database where datname = 'postgres'")
kill "$churn_pid" 2>/dev/null
wait "$churn_pid" 2>/dev/null
churn_pid=
note "$(cat "$work/churn.log")"
note "PostgreSQL committed $queries transactions (parallel queries) while the command ran"
kill -0 "$bench_pid" 2>/dev/null || { note "FAIL: pgbench stopped early: $(tail -n 3 "$work/pgbench.log")"; fail=1; }
pg_running || { note "FAIL: PostgreSQL went down: $(tail -n 3 "$work/server.log")"; fail=1; }
((queries > 100)) || { note "FAIL: too few parallel queries ran ($queries) to call the machine busy"; fail=1; }
((rc != 0 || fail == 0)) || rc=1
exit "$rc"
