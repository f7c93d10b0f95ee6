# SPDX-License-Identifier: MIT
# bench/churn.sh: the churn the long-run benches put a daemon under, to be
# sourced.  churn_tmp NAME makes $tmp, a directory under /var/tmp removed
# at exit with the daemon $daemon stopped and the background jobs killed.
# churn_prepare DIR N makes N distinct executables under DIR/exe
# (copies of one small program, each its own inode, so its own exe id, path
# and symbol cache entry); churn DIR N then runs forever a round of the
# probe tests' workloads (a second each) and 100 short-lived processes of
# those executables, in turn.  churn_conf BUILD names BUILD's shipped
# configuration; churn_started waits for a daemon to start.  Run from the
# top of a built tree.

# churn_conf BUILD: the shipped file of BUILD's sources (an older build's
# may not know the keys of this one's).
churn_conf() {
	s=$(sed -n 's/^abs_top_srcdir = //p' "$1/Makefile" 2>/dev/null)
	for f in "$1/conf/vitals.yaml" "$s/conf/vitals.yaml"; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
	echo conf/vitals.yaml
}

# churn_started NAME LOG PID: wait until vitalsd, PID, logs in LOG that it
# started (30 s at most); else show LOG and exit 1, NAME the bench's.
churn_started() {
	i=0
	until grep -q 'started:' "$2" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 300 ] || ! kill -0 "$3" 2>/dev/null; then
			cat "$2" >&2
			echo "$1: vitalsd did not start" >&2
			exit 1
		fi
		sleep 0.1
	done
}

churn_tmp() {
	tmp=$(mktemp -d "/var/tmp/vitals-$1.XXXXXX") ||
		{ echo "$1: cannot make a directory under /var/tmp" >&2; exit 1; }
	daemon=
	trap churn_cleanup EXIT
	trap 'exit 130' INT TERM
}

churn_cleanup() {
	[ -n "$daemon" ] && kill -INT "$daemon" 2>/dev/null && wait "$daemon"
	jobs -p | xargs -r kill 2>/dev/null
	rm -rf "$tmp"
}

churn_prepare() {
	mkdir -p "$1/exe"
	i=0
	while [ $i -lt "$2" ]; do
		cp tests/workloads/syscall_loop "$1/exe/prog$i"
		i=$((i + 1))
	done
}

churn() {
	n=0
	while :; do
		for w in busy pipe_sleeper runq page_toucher syscall_loop \
		    signal_storm lock_contention; do
			tests/workloads/$w 1 >/dev/null 2>&1
		done
		tests/workloads/fsync_writer 1 "$1" >/dev/null 2>&1
		tests/workloads/udp_sender 1 512 0 >/dev/null 2>&1
		k=0
		while [ $k -lt 100 ]; do
			"$1/exe/prog$(( (n * 100 + k) % $2 ))" 0.001 >/dev/null 2>&1
			k=$((k + 1))
		done
		n=$((n + 1))
	done
}
