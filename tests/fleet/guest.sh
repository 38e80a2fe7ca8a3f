#!/bin/sh
# tests/fleet/guest.sh: the guest script of every fleet guest (runs as
# /twilight/script under kernel/guest-run, busybox sh).
#
# Reads /etc/twilight/guest.env (written per guest by tests/fleet/fleet.sh):
#   NAME   host name of the guest
#   ROLE   containers | oomd | v2 (which cgroups and knobs the workload uses)
#   N      repetitions per workload step
#   AGENT_KILL  1: kill -9 the agent after phase 1, run phase 2 without an
#               agent, start it and kill -9 it during its start-up, then
#               restart it (fault test)
#   PHASE_DELAY seconds between a phase's "begin" marker and its workload
#               (gives the host time to apply a fault first)
#   MONITOR     1 (oomd): a monitoring daemon ("runc", as runc's stats
#               collection) also reads the kmem.tcp and soft limit files of
#               every cgroup, never writing them
#   CATALOG_PROBE  1: after the census, make the kernel print a text the
#               catalog lacks (probe-1), wait for the host to push a catalog
#               that knows it and for the running agent to fetch it, then
#               print it again (probe-2); see probe() below
# and /etc/twilight/agent.conf, ca.pem and enroll.token.
#
# Console protocol (parsed by tests/fleet/fleet.sh on the host):
#   FLEET-AGENT-START <n>          agent started (its n-th start, killed
#                                  starts counted)
#   FLEET-AGENT-KILLED[-AT-START]  agent killed -9 (after phase 1; during
#                                  its own start-up)
#   FLEET-PHASE <k> begin|end|delivered
#   FLEET-WORKLOAD workload op=... the workload's own log line
#   FLEET-KMSG-USER phase=P n=K    K records of the probe text written to
#                                  /dev/kmsg from user space in phase P
#   FLEET-CATALOG-WAIT             probe-1 delivered: push the newer catalog
#   FLEET-CATALOG-UPDATED <line>   the agent's log line saying it fetched it
#   FLEET-DONE                     every phase delivered; the guest then idles
#                                  until the host quits QEMU
#   FLEET-FAIL <reason>            something went wrong in the guest
# The workload lines are the ground truth the host checks the server
# against; nothing here reads what the agent sent.
. /twilight/lib.sh
. /etc/twilight/guest.env
: "${N:=5}" "${AGENT_KILL:=0}" "${PHASE_DELAY:=0}" "${MONITOR:=0}" "${CATALOG_PROBE:=0}"
SPOOL=/var/spool/twilight-agent
STATE=/var/lib/twilight-agent
M=/sys/fs/cgroup/memory
U=/sys/fs/cgroup/unified
AGENT=""
STARTS=0

# fail REASON: the guest's failure; a running agent (one that seems to
# hang: a start that never logs "started:", a spool that never drains)
# is described first, its threads' kernel stacks, spool and state included.
fail() {
	echo "FLEET-FAIL $*"
	if [ -n "$AGENT" ] && kill -0 "$AGENT" 2>/dev/null; then
		twl_describe "$AGENT" /tmp/agent.log $SPOOL $STATE
	else
		echo "--- agent log"
		tail -n 40 /tmp/agent.log 2>&1
	fi
	exit 3
}

# start_agent: start the agent and wait until this start has logged
# "started:" (its signal handling is set up by then: a SIGHUP sent earlier
# would end it, and TCG guests on a loaded host can take many seconds to
# get there). Only lines written after this start began count: a start
# killed before "started:" logs none, and a count of every line since boot
# then waited for ever for a line no agent would write. That was the
# "restart hang" of the fault test: its agent killed during its own
# start-up, the next start alive, started and idle, the wait still
# counting.
start_agent() {
	# The log must exist before the first grep: a missing file made the
	# count empty, the test "bad number", and the wait end at once.
	touch /tmp/agent.log
	before=$(grep -c ': started: ' /tmp/agent.log)
	twilight-agent -c /etc/twilight/agent.conf >>/tmp/agent.log 2>&1 &
	AGENT=$!
	STARTS=$((STARTS + 1))
	i=0
	while [ "$(grep -c ': started: ' /tmp/agent.log)" -le "$before" ]; do
		kill -0 "$AGENT" 2>/dev/null || fail "agent exited at start"
		i=$((i + 1))
		[ $i -lt 1200 ] || fail "agent not started after 600 s"
		sleep 0.5
	done
	echo "FLEET-AGENT-START $STARTS uptime=$(cut -d' ' -f1 /proc/uptime)"
}

# kill_at_start: start the agent and kill -9 it as soon as it runs its own
# program, long before it can log "started:" (the guest.sh of the restart
# hang waited for that line). The next start_agent must still see its own.
kill_at_start() {
	before=$(grep -c ': started: ' /tmp/agent.log)
	twilight-agent -c /etc/twilight/agent.conf >>/tmp/agent.log 2>&1 &
	pid=$!
	STARTS=$((STARTS + 1))
	i=0
	until readlink /proc/$pid/exe 2>/dev/null | grep -q twilight-agent; do
		i=$((i + 1))
		[ $i -lt 1000 ] || fail "agent started for kill_at_start never ran"
		sleep 0.01
	done
	kill -9 $pid
	wait $pid 2>/dev/null
	[ "$(grep -c ': started: ' /tmp/agent.log)" -eq "$before" ] ||
		fail "kill_at_start landed after start-up: it proves nothing"
	echo "FLEET-AGENT-KILLED-AT-START uptime=$(cut -d' ' -f1 /proc/uptime)"
}

# step ARGS...: run twl-workload once and put its log line on the console.
step() {
	out=$(twl-workload "$@")
	rc=$?
	[ $rc -le 1 ] || fail "twl-workload $* exited $rc"
	line=$(echo "$out" | grep '^workload op=')
	[ -n "$line" ] || fail "twl-workload $* logged nothing"
	echo "FLEET-WORKLOAD $line"
}

# spool_count: batches waiting in the agent's spool.
spool_count() {
	find $SPOOL -maxdepth 1 -type f ! -name '.*' 2>/dev/null | wc -l
}

# drained K: wait until the agent has spooled and delivered everything of
# phase K (pacing only: the host checks the server itself).
drained() {
	sleep 3 # > batch-interval: the phase's records are in a batch
	i=0
	while [ "$(spool_count)" != 0 ]; do
		kill -0 "$AGENT" 2>/dev/null || fail "agent died (phase $1)"
		i=$((i + 1))
		[ $i -lt 1200 ] || fail "spool not drained after 600 s (phase $1)"
		sleep 0.5
	done
	echo "FLEET-PHASE $1 delivered"
}

phase() {
	echo "FLEET-PHASE $1 begin"
	[ "$PHASE_DELAY" = 0 ] || sleep "$PHASE_DELAY"
}

# monitor: what a stats collector does, read only: every non-root memory
# cgroup's TCP buffer and soft limit files (the census's own reads are the
# agent's and never counted).
monitor() {
	for d in $(find $M -mindepth 1 -type d | sort); do
		for f in memory.kmem.tcp.limit_in_bytes memory.kmem.tcp.usage_in_bytes \
			memory.kmem.tcp.max_usage_in_bytes memory.kmem.tcp.failcnt \
			memory.soft_limit_in_bytes; do
			step -s -c "$d" -n $N -N runc read $f
		done
	done
}

# The probe: a cgroup v1 mount naming an unknown controller makes the
# kernel print "cgroup: Unknown subsys name '<name>'" (facility 0, once
# per mount); a name with "deprecated" in it makes that a deprecation text
# no catalog knows. The same text written to /dev/kmsg from user space
# (facility 1) before and after must never count.
PROBE_OPT=twl_deprecated_probe
PROBE_TEXT="cgroup: Unknown subsys name '$PROBE_OPT'"

# probe K: phase probe-K, delivered.
probe() {
	phase probe-$1
	printf '<3>%s\n' "$PROBE_TEXT" >/dev/kmsg || fail "writing /dev/kmsg"
	step -s -c /mnt/probe -n $N -N probe-mount mount cgroup "$PROBE_OPT"
	printf '<3>%s\n' "$PROBE_TEXT" >/dev/kmsg || fail "writing /dev/kmsg"
	echo "FLEET-KMSG-USER phase=probe-$1 n=2"
	echo "FLEET-PHASE probe-$1 end"
	drained probe-$1
}

# catalog_probe: probe-1 with the agent's catalog as started, then the
# same agent process, after fetching the newer catalog, probe-2.
catalog_probe() {
	mkdir -p /mnt/probe || fail "mkdir /mnt/probe"
	probe 1
	echo "FLEET-CATALOG-WAIT"
	i=0
	until grep -q 'catalog updated from the server' /tmp/agent.log; do
		kill -0 "$AGENT" 2>/dev/null || fail "agent died waiting for the catalog"
		i=$((i + 1))
		[ $i -lt 1800 ] || fail "no catalog update after 900 s"
		sleep 0.5
	done
	echo "FLEET-CATALOG-UPDATED $(grep 'catalog updated from the server' /tmp/agent.log | tail -n 1)"
	probe 2
}

hostname "$NAME"
mkdir -p $SPOOL $STATE
case "$ROLE" in
containers | oomd)
	mkdir -p $M
	mount -t cgroup -o memory memory $M || fail "mount v1 memory"
	;;
v2)
	mkdir -p $U
	mount -t cgroup2 none $U || fail "mount cgroup2"
	echo "+memory" >$U/cgroup.subtree_control || fail "enable memory in cgroup2"
	;;
*) fail "unknown ROLE '$ROLE'" ;;
esac
twilight-agent -c /etc/twilight/agent.conf --check-config >/tmp/check.log 2>&1 ||
	{ cat /tmp/check.log; fail "agent config rejected"; }
start_agent

# Phases: each uses knobs whose warning has not fired yet this boot, so
# every phase gives the agent something new to deliver.
case "$ROLE" in
containers)
	C1=$M/system.slice/docker-0123456789ab.scope
	C2=$M/kubepods.slice/cri-containerd-fedcba987654.scope
	mkdir -p $C1 $C2 || fail "mkdir container cgroups"
	phase 1
	step -c $C1 -n $N -N containerd-shim write memory.kmem.tcp.limit_in_bytes 104857600
	echo "FLEET-PHASE 1 end"
	if [ "$AGENT_KILL" = 1 ]; then
		sleep 2
		kill -9 "$AGENT"
		wait "$AGENT" 2>/dev/null
		echo "FLEET-AGENT-KILLED uptime=$(cut -d' ' -f1 /proc/uptime)"
		phase 2
		step -c $C2 -n $N -N 'runc:[2:INIT]' write memory.soft_limit_in_bytes 67108864
		echo "FLEET-PHASE 2 end"
		kill_at_start
		start_agent
	else
		drained 1
		phase 2
		step -c $C2 -n $N -N 'runc:[2:INIT]' write memory.soft_limit_in_bytes 67108864
		echo "FLEET-PHASE 2 end"
	fi
	drained 2
	phase 3
	step -c $C1 -n $N -N dockerd write memory.kmem.limit_in_bytes 209715200
	echo "FLEET-PHASE 3 end"
	drained 3
	phase 4
	step -c $C2 -n $N -N kubelet write memory.move_charge_at_immigrate 1
	echo "FLEET-PHASE 4 end"
	drained 4
	;;
oomd)
	D=$M/oomd.slice/app.service
	mkdir -p $D || fail "mkdir $D"
	phase 1
	step -c $D -n $N -N oom-notifier event memory.oom_control
	echo "FLEET-PHASE 1 end"
	drained 1
	phase 2
	step -c $D -n $N -N oom-notifier event memory.pressure_level critical
	echo "FLEET-PHASE 2 end"
	drained 2
	phase 3
	step -c $D -n $N -N oom-tuner write memory.oom_control 1
	echo "FLEET-PHASE 3 end"
	drained 3
	phase 4
	step -c $M/batch -n $N -N flat-batch write memory.use_hierarchy 0
	echo "FLEET-PHASE 4 end"
	drained 4
	if [ "$MONITOR" = 1 ]; then
		phase monitor
		monitor
		echo "FLEET-PHASE monitor end"
		drained monitor
	fi
	;;
v2)
	phase 1
	step -c $U/web -n $N -N v2-web write memory.max 209715200
	step -c $U/web -n $N -N v2-web write memory.high 104857600
	step -c $U/web -n $N -N v2-web read memory.pressure
	echo "FLEET-PHASE 1 end"
	drained 1
	;;
esac
# A fresh census (taken at start and on SIGHUP) with the knobs now set.
phase census
kill -HUP "$AGENT"
echo "FLEET-PHASE census end"
drained census
[ "$CATALOG_PROBE" = 0 ] || catalog_probe
echo "FLEET-DONE uptime=$(cut -d' ' -f1 /proc/uptime)"
while :; do
	kill -0 "$AGENT" 2>/dev/null || fail "agent died after the workload"
	sleep 2
done
