#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/pg-exec.sh -- `hpshm exec` around a real, unmodified PostgreSQL 15.
#
#   scripts/pg-exec.sh BUILD_DIR          e.g.  scripts/pg-exec.sh build-test
#
# Runs as root (it installs postgresql-15 with apt-get if it is missing, and runs the server
# as the postgres user, since initdb refuses root).  It changes no system setting: the caller
# reserves the pool of 2 MiB pages first, and this script says how many it needs (PostgreSQL's
# own shared_memory_size_in_huge_pages for shared_buffers=256MB, about 140) and stops before
# starting anything if they are not free.  It uses a throw-away cluster in a temporary
# directory, on a Unix socket there (no TCP port), and removes it at the end.
#
# What it shows, each as "ok:" or "FAIL:" (the exit status is 1 if any check failed):
#   1. started with huge_pages=off under `hpshm exec --config huge_pages=on`, the postmaster's
#      main shared mapping is hugetlb (smaps: 2048 kB pages), made by hpshm (the report file
#      says which provider, verified by smaps), and the 2 MiB pool's used + reserved pages
#      grew by exactly that mapping's pages;
#   2. pgbench -i, then pgbench -S -T 15 -c 4, complete with 0 failed transactions;
#   3. pg_ctl stop leaves the pool as it was;
#   4. the same server without the interposer runs the same pgbench on 4 KiB pages, and its
#      backends' VmPTE is far above the hpshm run's (printed side by side with tps: a
#      benchmark line, not a timed assertion);
#   5. with no free page in the pool (another process holds them all) and huge_pages=on the
#      server fails to start, with hpshm's reason in its log above PostgreSQL's FATAL; with
#      try it starts on 4 KiB pages and the log says it fell back;
#   6. at the end the pool is as it was at the start.
# It takes under 3 minutes (about one, most of it the two 15 s pgbench runs).
set -euo pipefail

usage() {
	echo "usage: $0 BUILD_DIR   (a build of hpshm with the tool and the interposer, e.g. build-test)" >&2
	exit 2
}
(($# == 1)) || usage
build=$(cd "$1" 2>/dev/null && pwd) || usage
tool=$build/tools/hpshm
[[ -x $tool && -r $build/preload/libhpshm_preload.so ]] ||
	{ echo "pg-exec: $tool or $build/preload/libhpshm_preload.so is missing: build the tree first" >&2; exit 2; }
((EUID == 0)) || { echo "pg-exec: run me as root (I run the server as the postgres user)" >&2; exit 2; }

pgbin=/usr/lib/postgresql/15/bin
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
port=5499
scale=10
seconds=15
failed=0
started=$(date +%s)

ok() { printf 'ok:   %s\n' "$*"; }
bad() {
	printf 'FAIL: %s\n' "$*"
	failed=1
}
note() { printf 'pg-exec: %s\n' "$*"; }
die() {
	printf 'pg-exec: FATAL: %s\n' "$*" >&2
	exit 1
}

[[ -d $hp ]] || die "this kernel has no 2 MiB huge pages ($hp)"

# ---- PostgreSQL -------------------------------------------------------------------------------
if [[ ! -x $pgbin/postgres || ! -x $pgbin/pgbench ]]; then
	note "installing postgresql-15 (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15 >/dev/null ||
		die "apt-get install postgresql-15 failed"
	# The package creates and may start a "main" cluster with huge_pages=try, which would take
	# pages from the pool under us: stop every cluster the install started.
	if command -v pg_lsclusters >/dev/null; then
		pg_lsclusters --no-header 2>/dev/null | awk '$4 == "online" { print $1, $2 }' |
			while read -r ver name; do
				note "stopping the cluster $ver/$name the package started"
				pg_ctlcluster "$ver" "$name" stop || true
			done
	fi
fi
id postgres >/dev/null 2>&1 || die "no postgres user (the postgresql-15 package makes it)"

work=$(mktemp -d /tmp/hpshm-pg-exec.XXXXXX)
chown postgres: "$work"
chmod 700 "$work"
# The postgres user runs the tool and loads the interposer, and the checkout may sit below a
# directory it cannot enter (/root, a home of mode 700): it gets an installed copy of its own
# in the work directory, as a packaged hpshm would be, found there the way an installed tool
# finds its interposer.
cmake --install "$build" --prefix "$work/hpshm" >"$work/install.log" 2>&1 ||
	die "cmake --install $build failed: $(tail -n 3 "$work/install.log")"
chown -R postgres: "$work/hpshm"
tool=$work/hpshm/bin/hpshm
[[ -x $tool ]] || die "the installed copy has no $tool"
data=$work/data
hog_pid=

# The server runs as postgres with a clean environment: no HPSHM_* or LD_PRELOAD of ours.
as_pg() {
	runuser -u postgres -- env -i PATH=/usr/bin:/bin HOME="$work" LANG=C LC_ALL=C "$@"
}
pg_ctl_() { as_pg "$pgbin/pg_ctl" -D "$data" "$@"; }
pg_running() { [[ -f $data/postmaster.pid ]] && kill -0 "$(head -n 1 "$data/postmaster.pid")" 2>/dev/null; }

cleanup() {
	local rc=$?
	if [[ -n ${data:-} ]] && pg_running; then
		pg_ctl_ -m immediate -w stop >/dev/null 2>&1 || true
	fi
	if [[ -n $hog_pid ]]; then
		kill "$hog_pid" 2>/dev/null || true
		wait "$hog_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the pool ---------------------------------------------------------------------------------
pool() { # pool -> "nr free resv surplus"
	echo "$(<$hp/nr_hugepages) $(<$hp/free_hugepages) $(<$hp/resv_hugepages) $(<$hp/surplus_hugepages)"
}
available() { # pages a new mapping could reserve now
	local nr free resv surplus over
	read -r nr free resv surplus <<<"$(pool)"
	over=$(<$hp/nr_overcommit_hugepages)
	echo $((free - resv + (over > surplus ? over - surplus : 0)))
}
in_use() { # pages used or promised: (nr - free) + resv
	local nr free resv surplus
	read -r nr free resv surplus <<<"$(pool)"
	echo $((nr - free + resv))
}

# ---- the cluster ------------------------------------------------------------------------------
note "cluster in $data (PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'))"
as_pg "$pgbin/initdb" -D "$data" -A trust -U postgres -E UTF8 --locale=C --no-sync >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log"; die "initdb failed"; }
cat >>"$data/postgresql.conf" <<EOF
# scripts/pg-exec.sh
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
shared_buffers = 256MB
huge_pages = off
max_connections = 20
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
jit = off
logging_collector = off
EOF

need=$(as_pg "$pgbin/postgres" -D "$data" -C shared_memory_size_in_huge_pages)
have=$(available)
pool0=$(pool)
note "PostgreSQL needs $need 2 MiB pages (shared_memory_size_in_huge_pages); the pool has $have free (nr free resv surplus: $pool0)"
if ((have < need)); then
	die "reserve at least $need free 2 MiB pages first, e.g.  echo \$((\$(cat $hp/nr_hugepages) + $need)) > $hp/nr_hugepages"
fi

# The main shared mapping of a process: the largest shared VMA in smaps, as "kB kernelpage_kB name".
main_mapping() {
	awk '
		/^[0-9a-f]+-[0-9a-f]+ / {
			if (shared && size > best) { best = size; bkps = kps; bname = name }
			shared = ($2 ~ /s$/); size = 0; kps = 0
			name = ""; for (i = 6; i <= NF; i++) name = name (i > 6 ? " " : "") $i
			next
		}
		/^Size:/ { size = $2 }
		/^KernelPageSize:/ { kps = $2 }
		END {
			if (shared && size > best) { best = size; bkps = kps; bname = name }
			printf "%d %d %s\n", best, bkps, (bname == "" ? "anon" : bname)
		}' "/proc/$1/smaps"
}
postmaster() { head -n 1 "$data/postmaster.pid"; }

# Sum of VmPTE (kB) over the postmaster's client backends, and how many there were.
backends_pte() {
	local pm=$1 sum=0 n=0 pid pte
	for pid in $(pgrep -P "$pm"); do
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '\[local\]' || continue
		pte=$(awk '/^VmPTE:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || continue
		sum=$((sum + ${pte:-0}))
		n=$((n + 1))
	done
	echo "$sum $n"
}

# Load the pgbench tables into shared_buffers, so that both runs start warm: otherwise the
# first run pays for faulting in the pool's pages (slow on a VM whose host has not backed
# them yet) and for reading the tables into the buffers, and the comparison shows that.
prewarm() {
	as_pg "$pgbin/psql" -h "$work" -p "$port" -qAt -v ON_ERROR_STOP=1 postgres -c \
		"CREATE EXTENSION IF NOT EXISTS pg_prewarm; SELECT sum(pg_prewarm(c)) FROM unnest(ARRAY['pgbench_accounts',
		 'pgbench_accounts_pkey', 'pgbench_branches', 'pgbench_tellers']) AS c" >/dev/null 2>&1 ||
		note "pg_prewarm is not available: the runs start cold"
}

# pgbench -S for $seconds s with 4 clients; samples the backends' VmPTE near the end.
# Prints "tps failed vmpte_sum backends".
bench() {
	local pm out pte
	pm=$(postmaster)
	(sleep $((seconds - 3)) && backends_pte "$pm" >"$work/pte") &
	out=$(as_pg "$pgbin/pgbench" -h "$work" -p "$port" -S -T "$seconds" -c 4 -j 2 postgres 2>&1) || {
		echo "$out" >&2
		wait
		echo "0 -1 0 0"
		return
	}
	wait
	pte=$(cat "$work/pte" 2>/dev/null || echo "0 0")
	echo "$(awk '/^tps = / {printf "%.0f", $3; exit}' <<<"$out") \
$(awk -F': ' '/^number of failed transactions/ {split($2, a, " "); print a[1]; exit}' <<<"$out") $pte"
}

# ---- 1-3: under hpshm exec, huge_pages=on ----------------------------------------------------
note "start under: hpshm exec --config huge_pages=on --report $work/report.json -- pg_ctl start"
report=$work/report.json
runuser -u postgres -- touch "$report"
before=$(in_use)
if as_pg "$tool" exec --config huge_pages=on --report "$report" -- \
	"$pgbin/pg_ctl" -D "$data" -l "$work/on.log" -w -t 60 start >/dev/null; then
	ok "PostgreSQL started with huge_pages=off under hpshm exec (huge_pages=on)"
else
	cat "$work/on.log"
	die "PostgreSQL did not start under hpshm exec"
fi
pm=$(postmaster)
read -r map_kb map_kps map_name <<<"$(main_mapping "$pm")"
mapped=$(grep -o '"mapped":[0-9]*' "$report" | head -n 1 | cut -d: -f2)
lines=$(grep -c '"call":"mmap"' "$report" || true)
if ((map_kps == 2048)); then
	ok "the postmaster's main shared mapping is hugetlb: $map_kb kB of 2048 kB pages ($map_name)"
else
	bad "the postmaster's main shared mapping has ${map_kps} kB pages ($map_kb kB, $map_name)"
fi
if ((lines == 1)) && grep -q '"huge":true' "$report" && grep -q '"verified":true' "$report" &&
	((mapped == map_kb * 1024)); then
	ok "the report has one line: provider $(grep -o '"provider":"[a-z_]*"' "$report" | head -n 1 | cut -d'"' -f4), $mapped bytes, page size verified by $(grep -o '"verified_by":"[A-Za-z_]*"' "$report" | head -n 1 | cut -d'"' -f4)"
else
	bad "the report does not match the mapping ($lines mmap lines, mapped=$mapped): $(cat "$report")"
fi
grown=$(($(in_use) - before))
if ((grown * 2048 == map_kb)); then
	ok "the 2 MiB pool's used + reserved pages grew by $grown, the mapping's $((map_kb / 2048)) pages"
else
	bad "the pool's used + reserved pages grew by $grown, the mapping has $((map_kb / 2048)) pages"
fi

note "pgbench -i -s $scale"
if as_pg "$pgbin/pgbench" -h "$work" -p "$port" -i -s "$scale" -q postgres >"$work/init.log" 2>&1; then
	ok "pgbench -i -s $scale completed"
else
	cat "$work/init.log"
	bad "pgbench -i failed"
fi
prewarm
note "pgbench -S -T $seconds -c 4 -j 2 (hpshm exec)"
read -r on_tps on_failed on_pte on_n <<<"$(bench)"
if [[ $on_failed == 0 ]]; then
	ok "pgbench -S: $on_tps tps, 0 failed transactions"
else
	bad "pgbench -S under hpshm exec: failed transactions: $on_failed"
fi
pg_ctl_ -m fast -w stop >/dev/null
if [[ $(pool) == "$pool0" ]]; then
	ok "pg_ctl stop left the pool as it was (nr free resv surplus: $(pool))"
else
	bad "after pg_ctl stop the pool is '$(pool)', it was '$pool0'"
fi

# ---- 4: the same server without the interposer ------------------------------------------------
note "start without the interposer (huge_pages=off: 4 KiB pages)"
pg_ctl_ -l "$work/off.log" -w -t 60 start >/dev/null || { cat "$work/off.log"; die "PostgreSQL did not start"; }
read -r off_kb off_kps off_name <<<"$(main_mapping "$(postmaster)")"
note "main shared mapping without the interposer: $off_kb kB of $off_kps kB pages ($off_name)"
prewarm
note "pgbench -S -T $seconds -c 4 -j 2 (plain)"
read -r off_tps off_failed off_pte off_n <<<"$(bench)"
pg_ctl_ -m fast -w stop >/dev/null
[[ $off_failed == 0 ]] || bad "pgbench -S without the interposer: failed transactions: $off_failed"
printf '\npg-exec: benchmark  pgbench -S -c 4 -j 2 -T %s, scale %s, shared_buffers 256MB, prewarmed (a measurement, not a check)\n' \
	"$seconds" "$scale"
printf '  %-26s %10s %28s\n' "run" "tps" "backend VmPTE, kB (sum, n)"
printf '  %-26s %10s %28s\n' "hpshm exec, 2 MiB pages" "$on_tps" "$on_pte ($on_n)"
printf '  %-26s %10s %28s\n\n' "plain, 4 KiB pages" "$off_tps" "$off_pte ($off_n)"
if ((on_n > 0 && off_n > 0 && on_pte * 2 < off_pte)); then
	ok "the backends' VmPTE under hpshm exec ($on_pte kB) is far below the plain run's ($off_pte kB)"
else
	bad "the backends' VmPTE under hpshm exec ($on_pte kB, $on_n backends) is not far below the plain run's ($off_pte kB, $off_n)"
fi

# ---- 5: no free page in the pool --------------------------------------------------------------
# Another process holds every free page (an hpshm segment kept by `hpshm run`), so the pool is
# empty for the server without any system setting being changed.
hold=$(available)
note "another process takes all $hold free pages"
"$tool" run --size $((hold * 2 * 1048576 - 8192)) --config huge_pages=on,provider=memfd_hugetlb --quiet -- \
	sleep 300 &
hog_pid=$!
for _ in $(seq 50); do
	(($(available) == 0)) && break
	sleep 0.1
done
(($(available) == 0)) || die "could not take every free page (still $(available) free)"

if as_pg "$tool" exec --config huge_pages=on -- \
	"$pgbin/pg_ctl" -D "$data" -l "$work/empty-on.log" -w -t 30 start >/dev/null 2>&1; then
	bad "PostgreSQL started with huge_pages=on and no free huge page"
	pg_ctl_ -m fast -w stop >/dev/null
elif grep -q 'hpshm preload: .*refused (huge_pages=on)' "$work/empty-on.log" &&
	grep -q 'FATAL:  could not map anonymous shared memory' "$work/empty-on.log"; then
	ok "with an empty pool and huge_pages=on PostgreSQL does not start; its log has hpshm's reason:"
	grep -m 1 'hpshm preload' "$work/empty-on.log" | cut -c 1-300 | sed 's/^/        /'
	grep -m 1 'FATAL' "$work/empty-on.log" | sed 's/^/        /'
else
	cat "$work/empty-on.log"
	bad "PostgreSQL did not start, but its log lacks hpshm's reason or PostgreSQL's FATAL"
fi

if as_pg "$tool" exec --config huge_pages=try -- \
	"$pgbin/pg_ctl" -D "$data" -l "$work/empty-try.log" -w -t 60 start >/dev/null 2>&1; then
	read -r try_kb try_kps try_name <<<"$(main_mapping "$(postmaster)")"
	if ((try_kps == 4)) && grep -q 'hpshm preload: .*fell back' "$work/empty-try.log"; then
		ok "with an empty pool and huge_pages=try PostgreSQL starts on 4 KiB pages ($try_kb kB, $try_name), and says so:"
		grep -m 1 'hpshm preload' "$work/empty-try.log" | cut -c 1-300 | sed 's/^/        /'
	else
		bad "with huge_pages=try the main mapping has $try_kps kB pages, or the log does not say it fell back"
	fi
	pg_ctl_ -m fast -w stop >/dev/null
else
	cat "$work/empty-try.log"
	bad "with an empty pool and huge_pages=try PostgreSQL did not start"
fi
kill "$hog_pid"
wait "$hog_pid" 2>/dev/null || true
hog_pid=

# ---- 6: the end -------------------------------------------------------------------------------
if [[ $(pool) == "$pool0" ]]; then
	ok "the pool is as it was at the start (nr free resv surplus: $(pool))"
else
	bad "the pool is '$(pool)' at the end, it was '$pool0'"
fi
note "done in $(($(date +%s) - started)) s"
if ((failed)); then
	note "FAILED"
	exit 1
fi
note "all checks passed"
