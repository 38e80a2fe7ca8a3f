# shellcheck shell=bash
# Sourced by guest tests whose agent reports to no one (tests/guest/kernels,
# tests/guest/restart).
#
# offline_agent_etc DIR LOG_LEVEL: write DIR/ca.pem (a throw-away CA, its
# key beside it), DIR/enroll.token and DIR/agent.conf for an agent with
# BPF on whose server never answers: 10.0.2.100 has no guestfwd, so every
# batch stays in the spool, where the test reads it. openssl's output goes
# to DIR/openssl.log. Returns non-zero, saying why, when the CA fails.
offline_agent_etc() {
	local dir=$1 level=$2
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj /CN=twilight-test-ca -keyout "$dir/ca.key" -out "$dir/ca.pem" \
		>"$dir/openssl.log" 2>&1 || {
		echo "openssl could not make a CA (log $dir/openssl.log)" >&2
		return 1
	}
	echo "guest-test-token" >"$dir/enroll.token"
	cat >"$dir/agent.conf" <<CONF
server-url = https://10.0.2.100:80
ca-file = /etc/twilight/ca.pem
enroll-token-file = /etc/twilight/enroll.token
state-dir = /var/lib/twilight-agent
spool-dir = /var/spool/twilight-agent
batch-interval = 1s
connect-timeout = 1s
backoff-base = 15m
log-level = $level
bpf = true
CONF
}
