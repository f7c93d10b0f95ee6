# SPDX-License-Identifier: MIT
# A fleet on one machine for the shell tests (tests/fleet.sh,
# tests/fleet_peer.sh): network namespaces with veth pairs into one bridge
# on a private subnet, names unique to the run, everything removed at exit.
# Sourced after tests/lib.sh, not run.

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null 2>&1 || skip "ip missing (Debian iproute2)"
command -v curl >/dev/null 2>&1 || skip "curl missing (Debian curl)"
command -v python3 >/dev/null 2>&1 || skip "python3 missing"

# Names unique to this run (interface names stay under 16 bytes): the
# caller may set RUN_PREFIX so that two tests never share a name.
RUN="${RUN_PREFIX:-vf}$(($$ % 100000))"
NET="10.$((100 + $$ % 100)).$(($$ % 250))"
BR="${RUN}br"
ip netns add "${RUN}probe" 2>/dev/null || skip "ip netns unavailable here"
ip netns del "${RUN}probe"

# Processes (PIDS) ended and namespaces (NSS) removed at exit, and $TMP
# unless VITALS_KEEP_TMP is set (to look at the stores after a run).
PIDS=""
NSS=""
netns_cleanup() {
	for p in $PIDS; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	for n in $NSS; do
		ip netns del "$n" 2>/dev/null
	done
	ip link del "$BR" 2>/dev/null
	if [ -n "${VITALS_KEEP_TMP:-}" ]; then
		echo "kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap netns_cleanup EXIT INT TERM

ip link add "$BR" type bridge || skip "no bridge support"
ip addr add "$NET.1/24" dev "$BR"
ip link set "$BR" up

# netns_add I: namespace ${RUN}nI at $NET.(10+I), its veth in the bridge
# (${RUN}aI on the bridge side, ${RUN}bI inside).
netns_add() {
	ns="${RUN}n$1"
	ip netns add "$ns" || fail "ip netns add $ns"
	NSS="$NSS $ns"
	ip link add "${RUN}a$1" type veth peer name "${RUN}b$1" ||
		fail "veth ${RUN}a$1"
	ip link set "${RUN}b$1" netns "$ns"
	ip link set "${RUN}a$1" master "$BR" up
	ip -n "$ns" addr add "$NET.$((10 + $1))/24" dev "${RUN}b$1"
	ip -n "$ns" link set "${RUN}b$1" up
	ip -n "$ns" link set lo up
}

# wait_until DESC CMD...: CMD every 0.25 s, at most 480 times (a hang
# guard, not a timing assertion); on failure the tail of $WAIT_LOG.
wait_until() {
	desc=$1
	shift
	tries=0
	until "$@" >/dev/null 2>&1; do
		tries=$((tries + 1))
		[ "$tries" -lt 480 ] || {
			[ -z "${WAIT_LOG:-}" ] || tail -30 "$WAIT_LOG" >&2
			fail "never: $desc"
		}
		sleep 0.25
	done
}

# files DIR HOST: names of HOST's epoch files under DIR, sorted.
files() {
	find "$1" -name "*Z_$2.json.gz" ! -name '.*' -printf '%f\n' 2>/dev/null | sort
}
# has_at_least DIR HOST N
has_at_least() {
	[ "$(files "$1" "$2" | wc -l)" -ge "$3" ]
}

# free_port: a TCP port free on 127.0.0.1 just now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
