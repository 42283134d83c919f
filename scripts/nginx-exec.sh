#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/nginx-exec.sh -- `hpshm exec` around a real, unmodified nginx, through its binary upgrade.
#
#   scripts/nginx-exec.sh BUILD_DIR          e.g.  scripts/nginx-exec.sh build-test
#
# Runs as root (nginx comes from Debian through scripts/deps.sh nginx, and its master runs as
# root as it does in production).  It changes no system setting: the caller reserves the pool of
# 2 MiB pages first; the script says how many it needs (two masters' zones, 26 pages) and stops
# before starting anything if they are not free.  nginx runs from a configuration of its own in a
# temporary directory (pid file, logs, cache, temp paths), listening on 127.0.0.1 only, and the
# directory is removed at the end.  A package install that started Debian's own nginx service
# is stopped again.
#
# What it shows, each as "ok:" or "FAIL:" (the exit status is 1 if any check failed):
#   1. nginx started as a daemon under `hpshm exec --config huge_pages=on --min-size 8MiB
#      --report F` has its two shared zones (limit_req_zone 16 MiB, proxy_cache keys_zone
#      10 MiB) on 2 MiB pages in its master (smaps), the report has a verified huge line for
#      each, and the first process, which made them and exited, handed them to the master;
#   2. it answers on 127.0.0.1;
#   3. `kill -USR2` (the binary upgrade: nginx execs the new master with only the variables its
#      env directive names) gives a new master whose zones are on 2 MiB pages too, with the
#      interposer loaded and a report line of its own for each zone, and the new
#      master answers;
#   4. QUIT to both masters ends every process of this nginx, the report records both masters'
#      zones ending, and the pool is as it was at the start.
# It takes about 10 s.
set -euo pipefail

usage() {
	echo "usage: $0 BUILD_DIR   (a build of hpshm with the tool and the interposer, e.g. build-test)" >&2
	exit 2
}
(($# == 1)) || usage
build=$(cd "$1" 2>/dev/null && pwd) || usage
tool=$build/tools/hpshm
lib=$build/preload/libhpshm_preload.so
[[ -x $tool && -r $lib ]] || { echo "nginx-exec: $tool or $lib is missing: build the tree first" >&2; exit 2; }
((EUID == 0)) || { echo "nginx-exec: run me as root (nginx's master runs as root)" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

nginx=/usr/sbin/nginx
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
req_zone_mb=16
cache_zone_mb=10
need=$((2 * (req_zone_mb + cache_zone_mb) / 2)) # pages: both masters' zones during the upgrade
failed=0
started=$(date +%s)

ok() { printf 'ok:   %s\n' "$*"; }
bad() {
	printf 'FAIL: %s\n' "$*"
	failed=1
}
note() { printf 'nginx-exec: %s\n' "$*"; }
die() {
	printf 'nginx-exec: FATAL: %s\n' "$*" >&2
	exit 1
}

[[ -d $hp ]] || die "this kernel has no 2 MiB huge pages ($hp)"

# ---- nginx ------------------------------------------------------------------------------------
if [[ ! -x $nginx ]]; then
	note "installing nginx (scripts/deps.sh nginx)"
	bash "$root/scripts/deps.sh" nginx || die "scripts/deps.sh nginx failed"
	# The package's service may have started with Debian's configuration (port 80): it is not
	# this script's nginx and would hold pages and ports, so it is stopped.
	if [[ -s /run/nginx.pid ]] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
		note "stopping the nginx service the package started (pid $(cat /run/nginx.pid))"
		"$nginx" -s quit 2>/dev/null || kill -QUIT "$(cat /run/nginx.pid)" || true
	fi
fi
[[ -x $nginx ]] || die "$nginx is missing after the install"

work=$(mktemp -d /tmp/hpshm-nginx-exec.XXXXXX)
chmod 755 "$work"
report=$work/report.json
pidfile=$work/nginx.pid

# Every nginx process of ours: the masters (their title keeps the command line, which names our
# configuration) and their children (workers, cache manager and loader, whose titles do not).
ours() {
	local m
	for m in $(pgrep -f -- "-c $work/nginx.conf" || true); do
		echo "$m"
		pgrep -P "$m" || true
	done
}

cleanup() {
	local rc=$? pid
	for pid in $(ours); do kill -QUIT "$pid" 2>/dev/null || true; done
	for _ in $(seq 50); do
		[[ -z $(ours) ]] && break
		sleep 0.1
	done
	for pid in $(ours); do kill -KILL "$pid" 2>/dev/null || true; done
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
have=$(available)
note "nginx $("$nginx" -v 2>&1 | cut -d/ -f2) needs $need free 2 MiB pages for two masters' zones; the pool has $have (nr free resv surplus: $pool0)"
((have >= need)) ||
	die "reserve at least $need free 2 MiB pages first, e.g.  echo \$((\$(cat $hp/nr_hugepages) + $need)) > $hp/nr_hugepages"

# ---- the configuration ------------------------------------------------------------------------
port=
for p in $(seq 18480 18580); do
	if [[ -z $(ss -Hltn "sport = :$p" 2>/dev/null) ]]; then
		port=$p
		break
	fi
done
[[ -n $port ]] || die "no free TCP port in 18480-18580 on 127.0.0.1"
mkdir -p "$work/cache" "$work/tmp"
cat >"$work/nginx.conf" <<EOF
# scripts/nginx-exec.sh
worker_processes 2;
pid $pidfile;
error_log $work/error.log info;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $work/tmp/body;
	proxy_temp_path $work/tmp/proxy;
	fastcgi_temp_path $work/tmp/fastcgi;
	uwsgi_temp_path $work/tmp/uwsgi;
	scgi_temp_path $work/tmp/scgi;
	limit_req_zone \$binary_remote_addr zone=req:${req_zone_mb}m rate=1000r/s;
	proxy_cache_path $work/cache keys_zone=cache:${cache_zone_mb}m;
	server {
		listen 127.0.0.1:$port;
		location / {
			limit_req zone=req burst=100;
			return 200 "ok\n";
		}
		location /cached {
			proxy_cache cache;
			proxy_pass http://127.0.0.1:$port/;
		}
	}
}
EOF
"$nginx" -t -q -p "$work" -e "$work/error.log" -c "$work/nginx.conf" || die "nginx -t refused the configuration"

# ---- helpers ----------------------------------------------------------------------------------
# One GET on 127.0.0.1:$port, without curl: prints the status line.
get() {
	local line
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$1" >&3
	IFS= read -r -t 5 line <&3 || line=
	exec 3<&-
	printf '%s\n' "${line%$'\r'}"
}

# The master in the pid file once it is there and alive, waiting up to 10 s for a change from $1.
master_after() {
	local old=$1 pid
	for _ in $(seq 100); do
		pid=$(cat "$pidfile" 2>/dev/null || true)
		if [[ -n $pid && $pid != "$old" ]] && kill -0 "$pid" 2>/dev/null; then
			echo "$pid"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# The shared mappings of the zones in a process: "size_kB kernelpage_kB name" for every shared
# VMA of at least 8 MiB (the zones; nginx's other shared memory is a page or two).
zones_of() {
	awk '
		/^[0-9a-f]+-[0-9a-f]+ / {
			if (shared && size >= 8192) printf "%d %d %s\n", size, kps, name
			shared = ($2 ~ /s$/); size = 0; kps = 0
			name = ""; for (i = 6; i <= NF; i++) name = name (i > 6 ? " " : "") $i
			next
		}
		/^Size:/ { size = $2 }
		/^KernelPageSize:/ { kps = $2 }
		END { if (shared && size >= 8192) printf "%d %d %s\n", size, kps, name }' "/proc/$1/smaps"
}

# Check that master $1's zones are the two of the configuration, on 2 MiB pages.
check_zones() {
	local who=$1 pid=$2 zones n huge
	zones=$(zones_of "$pid")
	n=$(grep -c . <<<"$zones" || true)
	huge=$(awk '$2 == 2048' <<<"$zones" | grep -c . || true)
	if ((n == 2 && huge == 2)); then
		ok "the $who master (pid $pid) has its 2 zones on 2 MiB pages: $(awk '{printf "%s%d kB (%s)", sep, $1, $3; sep=", "}' <<<"$zones")"
	else
		bad "the $who master (pid $pid) has $n zone mappings, $huge of them on 2 MiB pages: ${zones:-none}"
	fi
}

# Report lines of one process and kind: count_lines PID '"call":"mmap"' ['"huge":true' ...].
count_lines() {
	local pid=$1 lines
	shift
	lines=$(grep -F "\"pid\":$pid," "$report" 2>/dev/null || true)
	for want in "$@"; do
		lines=$(grep -F -- "$want" <<<"$lines" || true)
	done
	grep -c . <<<"$lines" || true
}

# ---- 1-2: started under hpshm exec, as a daemon -----------------------------------------------
note "start: hpshm exec --config huge_pages=on --min-size 8MiB --report $report -- $nginx -p $work -c $work/nginx.conf"
"$tool" exec --config huge_pages=on --min-size 8MiB --report "$report" -- \
	"$nginx" -p "$work" -e "$work/error.log" -c "$work/nginx.conf" ||
	{ cat "$work/error.log" 2>/dev/null; die "nginx did not start under hpshm exec"; }
old=$(master_after "") || { cat "$work/error.log"; die "no nginx master after 10 s"; }
check_zones "first" "$old"
made=$(grep -F '"call":"mmap"' "$report" | grep -F '"huge":true' | grep -F '"verified":true' | grep -c . || true)
maker=$(grep -F '"call":"mmap"' "$report" | head -n 1 | sed 's/^{"pid":\([0-9]*\),.*/\1/')
handed=$(grep -F '"event":"handover"' "$report" | grep -F "\"held_by\":[$old]" | grep -c . || true)
if ((made == 2 && handed == 2)); then
	ok "the report has both zones, huge and verified, made by pid $maker, which handed them to the master $old as it exited"
else
	bad "the report has $made huge verified zone lines and $handed handovers to the master $old: $(cat "$report")"
fi
status=$(get /)
if [[ $status == *" 200 "* ]]; then
	ok "nginx answers on 127.0.0.1:$port ($status)"
else
	bad "nginx does not answer on 127.0.0.1:$port (${status:-no answer})"
fi

# ---- 3: the binary upgrade --------------------------------------------------------------------
note "kill -USR2 $old: nginx execs a new master with an environment of its own making"
kill -USR2 "$old"
new=$(master_after "$old") || { cat "$work/error.log"; die "no new master after USR2"; }
for _ in $(seq 100); do
	(($(count_lines "$new" '"call":"mmap"') >= 2)) && break
	sleep 0.1
done
check_zones "new" "$new"
# Its environment cannot be read from /proc (nginx writes its process title over it), its maps can.
if grep -qF "$(readlink -f "$lib")" "/proc/$new/maps"; then
	ok "the new master has the interposer loaded ($(readlink -f "$lib"))"
else
	bad "the new master runs without the interposer (its maps have no $(readlink -f "$lib"))"
fi
newlines=$(count_lines "$new" '"call":"mmap"' '"huge":true' '"verified":true')
if ((newlines == 2)); then
	ok "the report has the new master's own lines for its 2 zones (pid $new, huge, verified)"
else
	bad "the report has $newlines huge verified zone lines of the new master $new: $(cat "$report")"
fi
status=$(get /)
[[ $status == *" 200 "* ]] && ok "nginx still answers after the upgrade ($status)" ||
	bad "nginx does not answer after the upgrade (${status:-no answer})"

# ---- 4: stop everything -----------------------------------------------------------------------
note "QUIT to the old master $old, then to the new one $new"
kill -QUIT "$old"
for _ in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
kill -QUIT "$new"
for _ in $(seq 100); do [[ -z $(ours) ]] && break; sleep 0.1; done
if [[ -z $(ours) ]]; then
	ok "every process of this nginx has ended"
else
	bad "nginx processes are left: $(ours | tr '\n' ' ')"
fi
old_ends=$(count_lines "$old" '"event":"destroy"')
new_ends=$(count_lines "$new" '"event":"destroy"')
if ((old_ends == 2 && new_ends == 2)); then
	ok "the report records both masters' zones ending (2 destroy lines each, at their exit)"
else
	bad "the report has $old_ends destroy lines of the old master and $new_ends of the new one (2 each expected)"
fi
for _ in $(seq 50); do
	[[ $(pool) == "$pool0" ]] && break
	sleep 0.1
done
if [[ $(pool) == "$pool0" ]]; then
	ok "the pool is as it was at the start (nr free resv surplus: $(pool))"
else
	bad "the pool is '$(pool)' at the end, it was '$pool0'"
fi
if ((failed)); then
	note "error log:"
	sed 's/^/        /' "$work/error.log"
	note "report:"
	sed 's/^/        /' "$report"
fi
note "done in $(($(date +%s) - started)) s"
if ((failed)); then
	note "FAILED"
	exit 1
fi
note "all checks passed"
