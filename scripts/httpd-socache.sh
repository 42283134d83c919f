#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/httpd-socache.sh -- a real Apache httpd caching HTTP responses in hpshm (mod_socache_hpshm).
#
#   scripts/httpd-socache.sh BUILD_DIR              with a pool of 2 MiB pages reserved
#   scripts/httpd-socache.sh --no-pool BUILD_DIR    on a machine with no free huge page
#
# BUILD_DIR is a build of hpshm with the module (httpd/mod_socache_hpshm.so, built when apxs is
# found: scripts/deps.sh test installs apache2-dev) and its bench module
# (httpd/mod_socache_bench.so).  Runs as root: httpd's parent runs as root and its children as
# www-data, as Debian runs it.  It changes no system setting: the caller reserves the pool, the
# script says how many pages it needs and stops before starting anything if they are not free.
# Each httpd runs from a configuration of its own in a temporary directory (pid file, logs,
# mutexes, documents), listening on 127.0.0.1 only; the directory goes at the end.  The
# configuration lines an operator copies from doc/httpd.md are the ones used: the script takes
# them from the block of that page marked "ci: httpd-socache.sh".
#
# With a pool, each check printed as "ok:" or "FAIL:" (exit status 1 if any failed):
#   1. httpd (mpm_event, mod_cache + mod_cache_socache, CacheSocache hpshm:size=256MiB,
#      huge_pages=on, CacheHeader on) starts; 1,000 requests for a cacheable page give one MISS
#      and then 999 X-Cache: HIT;
#   2. every child maps the segment on 2 MiB pages (its smaps), and mod_status shows the
#      provider and the verified page size;
#   3. a graceful restart gives new children that still have it on 2 MiB pages and answer the
#      first request with a HIT (the cache kept its contents);
#   4. a stop ends every process and returns every page to the pool;
#   5. side by side, the same server with shmcb and with hpshm under `ab -k -n 50000 -c 8`
#      for the 4 KiB page and a 64 KiB one,
#      five rounds with each first in turn: requests per second of each and the ratio of the
#      medians (printed, not judged: a timing belongs to the host), and the stores' own bench
#      (store + retrieve of 4 KiB objects by 2 concurrent workers, mod_socache_bench), as two
#      processes and as two threads of one process, five rounds each, each first in turn.
# Without a pool (--no-pool): huge_pages=on refuses to start and the error log has hpshm's
# reason and fix; huge_pages=try starts, serves HITs on base pages, and mod_status says so.
# It takes about 80 s with a pool, a few seconds without.
set -euo pipefail

usage() {
	echo "usage: $0 [--no-pool] BUILD_DIR   (a build of hpshm with httpd/mod_socache_hpshm.so, e.g. build-test)" >&2
	exit 2
}
nopool=0
if [[ ${1:-} == --no-pool ]]; then
	nopool=1
	shift
fi
(($# == 1)) || usage
build=$(cd "$1" 2>/dev/null && pwd) || usage
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
module=$build/httpd/mod_socache_hpshm.so
benchmod=$build/httpd/mod_socache_bench.so
((EUID == 0)) || { echo "httpd-socache: run me as root (httpd's parent runs as root)" >&2; exit 2; }

httpd=/usr/sbin/apache2
mods=/usr/lib/apache2/modules
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
size_mb=256
failed=0
started=$(date +%s)

ok() { printf 'ok:   %s\n' "$*"; }
bad() {
	printf 'FAIL: %s\n' "$*"
	failed=1
}
note() { printf 'httpd-socache: %s\n' "$*"; }
die() {
	printf 'httpd-socache: FATAL: %s\n' "$*" >&2
	exit 1
}

[[ -d $hp ]] || die "this kernel has no 2 MiB huge pages ($hp)"
if [[ ! -x $httpd || ! -x /usr/bin/ab ]]; then
	note "installing Apache httpd (scripts/deps.sh httpd)"
	bash "$root/scripts/deps.sh" httpd || die "scripts/deps.sh httpd failed"
fi
[[ -x $httpd ]] || die "$httpd is missing after the install"
[[ -r $module ]] || die "$module is missing: configure $build with apxs present (scripts/deps.sh test installs apache2-dev) and build it"
command -v curl >/dev/null || die "curl is missing (apt-get install curl)"

work=$(mktemp -d /tmp/hpshm-httpd.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/htdocs" "$work/run"
# A 4 KiB page, cached for 10 minutes.
head -c 4096 /dev/zero | tr '\0' 'h' >"$work/htdocs/page.html"
# And a 64 KiB one, for the side-by-side run: a larger object keeps the cache's lock longer.
head -c 65536 /dev/zero | tr '\0' 'b' >"$work/htdocs/big.html"
chmod -R a+rX "$work/htdocs"

servers=() # the names of the servers started, for the clean-up
pidof_server() { cat "$work/$1.pid" 2>/dev/null || true; }
children() { pgrep -P "$(pidof_server "$1")" 2>/dev/null || true; }
stop_server() { # stop_server NAME -> 0 once its parent has gone (a stop, then a kill after 10 s)
	local pid
	pid=$(pidof_server "$1")
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
	"$httpd" -f "$work/$1.conf" -k stop 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" $(pgrep -P "$pid") 2>/dev/null || true
	return 1
}
cleanup() {
	local rc=$? s
	for s in "${servers[@]}"; do stop_server "$s" || true; done
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the pool ---------------------------------------------------------------------------------
pool() { echo "$(<$hp/nr_hugepages) $(<$hp/free_hugepages) $(<$hp/resv_hugepages) $(<$hp/surplus_hugepages)"; }
available() {
	local nr free resv surplus over
	read -r nr free resv surplus <<<"$(pool)"
	over=$(<$hp/nr_overcommit_hugepages)
	echo $((free - resv + (over > surplus ? over - surplus : 0)))
}
pool0=$(pool)
# The hpshm server's cache, the shmcb server's (base pages), one bench server's hpshm store at a time.
need=$((size_mb / 2 + 32))
have=$(available)
if ((nopool)); then
	((have == 0)) || die "--no-pool: the pool has $have free 2 MiB pages; empty it first (.ci/run's no-pool step does)"
	note "no free huge page (nr free resv surplus: $pool0)"
else
	note "needs $need free 2 MiB pages (a ${size_mb} MiB cache, then the bench's 64 MiB store); the pool has $have (nr free resv surplus: $pool0)"
	((have >= need)) ||
		die "reserve at least $need free 2 MiB pages first, e.g.  echo \$((\$(cat $hp/nr_hugepages) + $need)) > $hp/nr_hugepages"
fi

next_port=18600
free_port() { # port= a TCP port nobody listens on, from 18600 up, not yet handed out
	for ((port = next_port; port <= 18800; port++)); do
		if [[ -z $(ss -Hltn "sport = :$port" 2>/dev/null) ]]; then
			next_port=$((port + 1))
			return 0
		fi
	done
	die "no free TCP port in 18600-18800 on 127.0.0.1"
}

# ---- the configuration ------------------------------------------------------------------------
# The operator's lines, from doc/httpd.md: the block after the marker, up to its closing fence.
# The LoadModule line of the page points at the installed module; it is set to this build's.
doc_lines() {
	awk '/<!-- ci: httpd-socache.sh -->/ { on = 1; next } on && /^```apache/ { inblock = 1; next }
		inblock && /^```/ { exit } inblock { print }' "$root/doc/httpd.md"
}
doc_block=$(doc_lines)
[[ -n $doc_block ]] || die "doc/httpd.md has no configuration block marked \"ci: httpd-socache.sh\""
grep -q '^CacheSocache hpshm:' <<<"$doc_block" || die "doc/httpd.md's marked block has no CacheSocache hpshm: line"

# How the server runs its workers ($mpm): "event", mpm_event with two processes of 16 threads
# (Debian's default MPM); "prefork", a process per connection, so two concurrent requests are
# two processes; "event1", one process of 16 threads, so they are two threads of one process.
mpm=event
mpm_lines() {
	case $mpm in
	event | event1)
		cat <<EOF
LoadModule mpm_event_module $mods/mod_mpm_event.so
StartServers $([[ $mpm == event ]] && echo 2 || echo 1)
ServerLimit $([[ $mpm == event ]] && echo 2 || echo 1)
ThreadsPerChild 16
MaxRequestWorkers $([[ $mpm == event ]] && echo 32 || echo 16)
MinSpareThreads 8
MaxSpareThreads 32
EOF
		;;
	prefork)
		cat <<EOF
LoadModule mpm_prefork_module $mods/mod_mpm_prefork.so
StartServers 2
MinSpareServers 2
MaxSpareServers 4
ServerLimit 4
MaxRequestWorkers 4
EOF
		;;
	esac
}

# write_conf NAME CACHE_LINES [EXTRA]: a server of its own in $work, on a port of its own.
write_conf() {
	local name=$1 cache=$2 extra=${3:-} port
	free_port
	echo "$port" >"$work/$name.port"
	cat >"$work/$name.conf" <<EOF
# scripts/httpd-socache.sh: $name
ServerRoot $work
ServerName localhost
Listen 127.0.0.1:$port
PidFile $work/$name.pid
ErrorLog $work/$name-error.log
LogLevel notice
DefaultRuntimeDir $work/run

User www-data
Group www-data
$(mpm_lines)
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule authz_host_module $mods/mod_authz_host.so
LoadModule mime_module $mods/mod_mime.so
LoadModule headers_module $mods/mod_headers.so
LoadModule status_module $mods/mod_status.so
LoadModule cache_module $mods/mod_cache.so
LoadModule cache_socache_module $mods/mod_cache_socache.so
LoadModule socache_shmcb_module $mods/mod_socache_shmcb.so
TypesConfig /etc/mime.types
MaxConnectionsPerChild 0
KeepAlive On
DocumentRoot $work/htdocs
<Directory $work/htdocs>
	Require all granted
	Header set Cache-Control "public, max-age=600"
</Directory>
ExtendedStatus On
<Location /server-status>
	SetHandler server-status
	Require ip 127.0.0.1
</Location>
CacheDisable /server-status
CacheDisable /socache-bench
$cache
$extra
EOF
	"$httpd" -t -f "$work/$name.conf" >"$work/$name-t.log" 2>&1 || {
		cat "$work/$name-t.log"
		die "httpd -t refused the configuration $name"
	}
}

# The doc's lines with this build's module and this run's size.
hpshm_lines() { # hpshm_lines HUGE_PAGES
	sed -e "s|^LoadModule socache_hpshm_module .*|LoadModule socache_hpshm_module $module|" -e "s|huge_pages=[a-z]*|huge_pages=$1|" <<<"$doc_block"
}

start_server() { # start_server NAME [CHILDREN] -> 0 once it answers with CHILDREN (2); its -k start status otherwise
	local name=$1 want=${2:-2} rc=0
	"$httpd" -f "$work/$name.conf" -k start >"$work/$name-start.log" 2>&1 || rc=$?
	((rc == 0)) || return "$rc"
	servers+=("$name")
	for _ in $(seq 100); do
		[[ -n $(pidof_server "$name") ]] && curl -s -o "$work/probe.out" "http://127.0.0.1:$(<"$work/$name.port")/server-status?auto" &&
			(($(children "$name" | grep -c .) >= want)) && return 0
		sleep 0.1
	done
	return 1
}

# hits NAME N [PAGE] -> "MISS HIT": the X-Cache answers of N requests for PAGE (page.html) on one connection.
hits() {
	local url urls=() i
	url="http://127.0.0.1:$(<"$work/$1.port")/${3:-page.html}"
	for ((i = 0; i < $2; i++)); do urls+=("$url"); done
	curl -s -D "$work/headers.txt" "${urls[@]}" >"$work/body.out" || true
	echo "$(grep -ci '^X-Cache: MISS' "$work/headers.txt" || true) $(grep -ci '^X-Cache: HIT' "$work/headers.txt" || true)"
}

# The segment in a process: "size_kB kernelpage_kB name" of every shared mapping of at least the
# cache's size (httpd's own shared memory, the scoreboard, is far smaller).
segments_of() {
	awk -v min=$((size_mb * 1024)) '
		/^[0-9a-f]+-[0-9a-f]+ / {
			if (shared && size >= min) printf "%d %d %s\n", size, kps, name
			shared = ($2 ~ /s$/); size = 0; kps = 0
			name = ""; for (i = 6; i <= NF; i++) name = name (i > 6 ? " " : "") $i
			next
		}
		/^Size:/ { size = $2 }
		/^KernelPageSize:/ { kps = $2 }
		END { if (shared && size >= min) printf "%d %d %s\n", size, kps, name }' "/proc/$1/smaps" 2>/dev/null
}

check_children() { # check_children NAME WHEN KERNELPAGE_KB
	local name=$1 when=$2 want=$3 pid segs n=0 good=0 seen=""
	for pid in $(children "$name"); do
		n=$((n + 1))
		segs=$(segments_of "$pid")
		seen+=" $pid:[${segs:-none}]"
		[[ $(grep -c . <<<"$segs") == 1 && $(awk '{ print $2 }' <<<"$segs") == "$want" ]] && good=$((good + 1))
	done
	if ((n >= 1 && good == n)); then
		ok "$when: each of the $n children maps the cache once, on $want kB pages:$seen"
	else
		bad "$when: $good of $n children map the cache once on $want kB pages:$seen"
	fi
}

status_of() { curl -s "http://127.0.0.1:$(<"$work/$1.port")/server-status${2:-}" || true; }

if ((nopool)); then
	# ---- no pool: on refuses, try starts on base pages -----------------------------------
	write_conf on "$(hpshm_lines on)"
	rc=0
	start_server on || rc=$?
	if ((rc != 0)) && [[ -z $(pidof_server on) || ! -e /proc/$(pidof_server on) ]]; then
		ok "huge_pages=on with an empty pool: httpd refuses to start (exit $rc)"
	else
		bad "huge_pages=on with an empty pool: httpd started (pid $(pidof_server on))"
	fi
	reason=$(grep -h 'mod_socache_hpshm' "$work/on-error.log" "$work/on-start.log" 2>/dev/null | head -n 3 || true)
	if grep -qi 'huge' <<<"$reason" && grep -qiE 'nr_hugepages|hpshm plan|reserve' <<<"$reason"; then
		ok "the error log has hpshm's reason and fix: $(head -n 1 <<<"$reason")"
	else
		bad "the error log has no reason with its fix from mod_socache_hpshm: ${reason:-nothing}"
		sed 's/^/        /' "$work/on-error.log" "$work/on-start.log" 2>/dev/null || true
	fi

	write_conf try "$(hpshm_lines try)"
	if start_server try; then
		ok "huge_pages=try with an empty pool: httpd starts"
		read -r miss hit <<<"$(hits try 100)"
		((miss == 1 && hit == 99)) && ok "on base pages: 1 MISS, then 99 HITs" ||
			bad "on base pages: $miss MISS and $hit HIT of 100 (1 and 99 expected)"
		check_children try "base pages" 4
		st=$(status_of try "?auto")
		if grep -qiE 'hpshm.*page size 4KiB' <<<"$st" && grep -qiE 'fallback|base pages' <<<"$st"; then
			ok "mod_status says so: $(grep -iE 'hpshm.*page size' <<<"$st" | head -n 1)"
		else
			bad "mod_status does not say the cache is on base pages and why: $(grep -i hpshm <<<"$st" | head -n 5)"
		fi
		stop_server try || bad "httpd (try) did not stop within 10 s"
	else
		bad "huge_pages=try with an empty pool: httpd did not start"
		sed 's/^/        /' "$work/try-error.log" "$work/try-start.log" 2>/dev/null || true
	fi
	note "done in $(($(date +%s) - started)) s"
	((failed == 0)) || { note "FAILED"; exit 1; }
	note "all checks passed"
	exit 0
fi

# ---- 1. start, 1,000 requests ----------------------------------------------------------------
write_conf hpshm "$(hpshm_lines on)"
note "doc/httpd.md's lines, as run:"
hpshm_lines on | sed 's/^/        /'
start_server hpshm || {
	sed 's/^/        /' "$work/hpshm-error.log" "$work/hpshm-start.log" 2>/dev/null || true
	die "httpd with CacheSocache hpshm did not start"
}
ok "httpd started with CacheSocache hpshm (parent $(pidof_server hpshm), children $(children hpshm | tr '\n' ' '))"
read -r miss hit <<<"$(hits hpshm 1000)"
if ((miss == 1 && hit == 999)); then
	ok "1,000 requests for /page.html: 1 MISS, then 999 X-Cache: HIT"
else
	bad "1,000 requests for /page.html: $miss MISS and $hit HIT (1 and 999 expected)"
fi

# ---- 2. the children's smaps, mod_status -----------------------------------------------------
check_children hpshm "after start" 2048
st=$(status_of hpshm "?auto")
if grep -qiE 'hpshm.*page size 2MiB \(verified\)' <<<"$st"; then
	ok "mod_status: $(grep -iE 'hpshm.*page size' <<<"$st" | head -n 1)"
else
	bad "mod_status does not show the verified 2 MiB page size: $(grep -i hpshm <<<"$st" | head -n 5)"
fi

# ---- 3. a graceful restart keeps serving HITs ------------------------------------------------
old=$(children hpshm | sort)
"$httpd" -f "$work/hpshm.conf" -k graceful
for _ in $(seq 100); do
	now=$(children hpshm | sort)
	[[ -n $now && -z $(comm -12 <(echo "$old") <(echo "$now")) ]] && break
	sleep 0.1
done
if [[ -n $(comm -12 <(echo "$old") <(echo "$(children hpshm | sort)")) ]]; then
	bad "graceful restart: old children are still there after 10 s"
fi
read -r miss hit <<<"$(hits hpshm 10)"
if ((miss == 0 && hit == 10)); then
	ok "after a graceful restart the new children answer with HITs from the first request (10 of 10)"
else
	bad "after a graceful restart: $miss MISS and $hit HIT of 10 (the cache should have kept its contents)"
fi
check_children hpshm "after the graceful restart" 2048

# ---- 4. stop: every page back ----------------------------------------------------------------
stop_server hpshm || bad "httpd did not stop within 10 s of -k stop"
for _ in $(seq 50); do
	[[ $(pool) == "$pool0" ]] && break
	sleep 0.1
done
if [[ $(pool) == "$pool0" ]]; then
	ok "after the stop the pool is as it was at the start (nr free resv surplus: $(pool))"
else
	bad "after the stop the pool is '$(pool)', it was '$pool0'"
fi

# ---- 5. side by side: shmcb and hpshm under ab, and the stores' own bench --------------------
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

write_conf shmcb "CacheEnable socache /
CacheSocache shmcb:$work/run/shmcb($((size_mb * 1048576)))
CacheHeader on"
write_conf hpshm "$(hpshm_lines on)"
for s in shmcb hpshm; do
	start_server "$s" || {
		sed 's/^/        /' "$work/$s-error.log" "$work/$s-start.log" 2>/dev/null || true
		die "httpd with CacheSocache $s did not start"
	}
done
rps() { # rps NAME PAGE -> requests per second of one ab run (50000 requests, 8 at a time, keep-alive)
	ab -q -k -n 50000 -c 8 "http://127.0.0.1:$(<"$work/$1.port")/$2" >"$work/ab-$1.txt" 2>&1 || true
	if ! grep -q '^Failed requests: *0$' "$work/ab-$1.txt"; then
		bad "ab against $1 had failed requests: $(grep -E '^(Failed|Non-2xx)' "$work/ab-$1.txt" | tr '\n' ' ')"
	fi
	awk '/^Requests per second:/ { print $4 }' "$work/ab-$1.txt"
}
# Five rounds per page, each server first in turn (the second run of a round meets a warmer machine).
for page in page.html:4 big.html:64; do
	kb=${page#*:} page=${page%:*}
	hits shmcb 2 "$page" >/dev/null # the first request of a page is the MISS that caches it
	hits hpshm 2 "$page" >/dev/null
	s=() h=()
	for round in 1 2 3 4 5; do
		if ((round % 2)); then
			s+=("$(rps shmcb "$page")")
			h+=("$(rps hpshm "$page")")
		else
			h+=("$(rps hpshm "$page")")
			s+=("$(rps shmcb "$page")")
		fi
		note "ab, $kb KiB page, round $round: shmcb ${s[-1]} req/s, hpshm ${h[-1]} req/s, ratio $(ratio_of "${h[-1]}" "${s[-1]}")"
	done
	ms=$(median "${s[@]}")
	mh=$(median "${h[@]}")
	note "ab -k -n 50000 -c 8, a $kb KiB page from mod_cache_socache, medians of 5 rounds: shmcb $ms req/s, hpshm $mh req/s: hpshm/shmcb = $(ratio_of "$mh" "$ms")"
done
stop_server shmcb || bad "httpd (shmcb) did not stop within 10 s"
stop_server hpshm || bad "httpd (hpshm) did not stop within 10 s"

# The stores alone (mod_socache_bench): two workers that store and retrieve 4 KiB objects at
# once, as two processes (mpm_prefork) and as two threads of one process (mpm_event with one
# child).  Which one a server's requests get decides how much a global mutex costs, so both
# are measured rather than left to where mpm_event happens to put two connections.
bench_lines() {
	cat <<EOF
LoadModule socache_hpshm_module $module
LoadModule socache_bench_module $benchmod
SocacheBench shmcb:$work/run/bench-$1-shmcb(67108864)
SocacheBench hpshm:size=64MiB,huge_pages=on
<Location /socache-bench>
	SetHandler socache-bench
	Require ip 127.0.0.1
</Location>
EOF
}
store_bench() { # store_bench SERVER PROVIDER -> store+retrieve per second, summed over 2 concurrent workers
	local url i
	url="http://127.0.0.1:$(<"$work/$1.port")/socache-bench?provider=$2&seconds=2&size=4096"
	for i in 1 2; do curl -s -o "$work/bench-$2-$i.txt" "$url" & done
	wait
	cat "$work/bench-$2-1.txt" "$work/bench-$2-2.txt" |
		awk -F'ops_per_s=' 'NF > 1 { split($2, v, /[ \t]/); sum += v[1]; n++ } END { printf "%.0f %d\n", sum, n }'
}
if [[ -r $benchmod ]]; then
	for mpm in prefork event1; do
		server=bench-$mpm
		[[ $mpm == prefork ]] && how="2 processes" || how="2 threads of one process"
		write_conf "$server" "" "$(bench_lines "$mpm")"
		start_server "$server" "$([[ $mpm == prefork ]] && echo 2 || echo 1)" || {
			sed 's/^/        /' "$work/$server-error.log" "$work/$server-start.log" 2>/dev/null || true
			die "httpd with mod_socache_bench ($mpm) did not start"
		}
		bs=() bh=()
		for round in 1 2 3 4 5; do
			for p in $( ((round % 2)) && echo shmcb hpshm || echo hpshm shmcb); do
				read -r v n <<<"$(store_bench "$server" "$p")"
				((n == 2)) || bad "the store bench of $p ($how) answered $n of 2 workers: $(cat "$work"/bench-"$p"-*.txt)"
				[[ $p == shmcb ]] && bs+=("$v") || bh+=("$v")
			done
			note "store bench, $how, round $round: shmcb ${bs[-1]} ops/s, hpshm ${bh[-1]} ops/s, ratio $(ratio_of "${bh[-1]}" "${bs[-1]}")"
		done
		ms=$(median "${bs[@]}")
		mh=$(median "${bh[@]}")
		note "store bench, store+retrieve of 4 KiB objects by $how, medians of 5 rounds: shmcb $ms ops/s, hpshm $mh ops/s: hpshm/shmcb = $(ratio_of "$mh" "$ms")"
		stop_server "$server" || bad "httpd ($server) did not stop within 10 s"
	done
else
	bad "the store bench module $benchmod is missing"
fi
for _ in $(seq 50); do
	[[ $(pool) == "$pool0" ]] && break
	sleep 0.1
done
[[ $(pool) == "$pool0" ]] && ok "after the side-by-side runs the pool is as it was at the start" ||
	bad "after the side-by-side runs the pool is '$(pool)', it was '$pool0'"

if ((failed)); then
	for f in "$work"/*-error.log; do
		note "$f:"
		sed 's/^/        /' "$f"
	done
fi
note "done in $(($(date +%s) - started)) s"
if ((failed)); then
	note "FAILED"
	exit 1
fi
note "all checks passed"
