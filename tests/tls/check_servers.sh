#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tls transport against clients nobody here wrote, and its failures as
# an operator sees them: twinwire-kvd and twinwire-bench over tls, with
# certificates made for this run (make-certs.sh).  TAP output.
#  - openssl s_client completes a handshake (TLS 1.3 and 1.2) and gets
#    replies; a second connection resumes the session; redis-cli --tls works,
#    with a client certificate under mutual TLS; the same over a Unix socket;
#    redis-benchmark --tls runs its default test list; redis-py with
#    ssl=True verifies the certificate and gets its replies
#  - a plaintext client, an unknown CA, an expired certificate, a host name
#    that does not match, a client without (or with a stranger's)
#    certificate: each fails with one log line that says why, OpenSSL's
#    reason and the certificate's subject included
#  - a handshake that never completes is cut off at tls.handshake_timeout_ms,
#    and past tls.max_handshakes in flight a new one is refused at once
#  - tcp and tls side by side on two ports (tls.listen_port): each client on
#    its own, INFO and twinwire-info --status counting each transport, each
#    wrong client told so
#  - SIGHUP reloads the certificate: new connections get the new one, an open
#    session goes on; a broken file keeps the old one and says why
#  - every mistake in the tls.* keys is refused by --check-config with the
#    key, the value and the reason, also when tls is not the transport
#
#   check_servers.sh KVD BENCH MAKE_CERTS
# TWINWIRE_PLUGIN_PATH must lead to twinwire-tls-abi1.so.
set -u
KVD=$1 BENCH=$2 MAKE_CERTS=$3 INFO=$4
for tool in openssl redis-cli timeout; do
    command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tls-servers.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
[ -n "${KEEP_WORK:-}" ] && trap - EXIT
C=$WORK/certs
"$MAKE_CERTS" "$C" || { echo "Bail out! make-certs.sh failed"; exit 1; }

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)) failed=1
    echo "not ok $n - $1"
    shift
    for f in "$@"; do [ -f "$f" ] && sed 's/^/#   /' "$f" | tail -40; done
}
# check WHAT FILE REGEX [MORE FILES TO SHOW]
check() { if grep -Eq -- "$3" "$2"; then ok "$1"; else not_ok "$1 (no /$3/)" "$2" "${@:4}"; fi; }

# wait_for FILE REGEX [SECONDS]: until FILE matches (default 30 s).
wait_for() {
    local i
    for ((i = 0; i < ${3:-30} * 10; i++)); do
        grep -Eq -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# start_kvd NAME ARGS...: twinwire-kvd over tls on a free port; sets $port, $log.
start_kvd() {
    local name=$1
    shift
    log=$WORK/$name.log
    "$KVD" --port 0 --transport tls --log-level debug --set tls.cert_file="$C/server.pem" --set tls.key_file="$C/server.key" \
        --set tls.ca_file="$C/ca.pem" "$@" >"$log" 2>&1 &
    pids+=($!)
    if ! wait_for "$log" 'listening on 127\.0\.0\.1:[0-9]+ over tls'; then
        echo "Bail out! twinwire-kvd $name did not start"
        sed 's/^/#   /' "$log"
        exit 1
    fi
    port=$(grep -Eo 'listening on 127\.0\.0\.1:[0-9]+' "$log" | head -1 | sed 's/.*://')
}

# talk OUT INPUT EXPECT S_CLIENT-ARGS...: s_client sends INPUT and keeps its
# stdin open until OUT holds EXPECT (at most 20 s), then ends it.
talk() {
    local out=$1 input=$2 expect=$3 i
    shift 3
    {
        printf '%b' "$input"
        for ((i = 0; i < 200; i++)); do
            grep -qF -- "$expect" "$out" 2>/dev/null && break
            sleep 0.1
        done
    } | timeout 30 openssl s_client -connect "127.0.0.1:$port" -no_ign_eof -nocommands "$@" >"$out" 2>&1
}

# hold NAME PORT: an s_client session that stays open, fed through the fifo
# $WORK/NAME.in on descriptor $held_fd, its output in $WORK/NAME.out.
hold() {
    mkfifo "$WORK/$1.in"
    timeout 120 openssl s_client -connect "127.0.0.1:$2" -CAfile "$C/ca.pem" -no_ign_eof -nocommands \
        <"$WORK/$1.in" >"$WORK/$1.out" 2>&1 &
    pids+=($!)
    exec {held_fd}>"$WORK/$1.in"
}

# silent N: a raw TCP connection that sends nothing, on file descriptor N.
silent() { eval "exec $1<>/dev/tcp/127.0.0.1/$port"; }
# eof_within N SECONDS: reading descriptor N ends (the server closed it) in time.
eof_within() { timeout "$2" cat <&"$1" >/dev/null; }

# --- real clients --------------------------------------------------------
start_kvd plain-auth
talk "$WORK/s13" 'PING\r\nECHO over-tls\r\n' 'over-tls' -CAfile "$C/ca.pem" -verify_return_error -sess_out "$WORK/session"
check "openssl s_client completes a TLS 1.3 handshake with twinwire-kvd over tls, verifies it and gets replies" \
    "$WORK/s13" 'Verify return code: 0 \(ok\)' "$log"
check "... and kvd's replies come back through it: +PONG" "$WORK/s13" '\+PONG' "$log"
check "... and the echoed text" "$WORK/s13" 'over-tls' "$log"
check "... with TLS 1.3" "$WORK/s13" '^New, TLSv1\.3'
talk "$WORK/resumed" 'PING\r\n' '+PONG' -CAfile "$C/ca.pem" -sess_in "$WORK/session"
check "a second s_client connection resumes the session (tls.session_resumption, tickets)" "$WORK/resumed" '^Reused, TLSv1\.3' "$log"
talk "$WORK/s12" 'PING\r\n' '+PONG' -CAfile "$C/ca.pem" -verify_return_error -tls1_2
check "openssl s_client -tls1_2 completes a TLS 1.2 handshake and gets +PONG" "$WORK/s12" 'Protocol *: TLSv1\.2' "$log"
out=$(timeout 20 redis-cli -p "$port" --tls --cacert "$C/ca.pem" SET tls-key works 2>&1; timeout 20 redis-cli -p "$port" --tls --cacert "$C/ca.pem" GET tls-key 2>&1)
if [ "$out" = "$(printf 'OK\nworks')" ]; then ok "redis-cli --tls --cacert sets and gets a key"; else not_ok "redis-cli --tls --cacert sets and gets a key: '$out'" "$log"; fi
# redis-benchmark --tls: its default test list (no -t), every test answered.
if command -v redis-benchmark >/dev/null; then
    timeout 300 redis-benchmark -p "$port" --tls --cacert "$C/ca.pem" -n 2000 -c 10 -q >"$WORK/bench" 2>&1
    st=$? tests=$(grep -c 'requests per second' "$WORK/bench")
    if [ $st = 0 ] && [ "$tests" -ge 19 ] && ! grep -Eqi 'error|warning' "$WORK/bench"; then
        ok "redis-benchmark --tls runs its default test list ($tests tests) with no error"
    else
        not_ok "redis-benchmark --tls runs its default test list: status $st, $tests tests" "$WORK/bench" "$log"
    fi
else
    ok "# SKIP redis-benchmark --tls: no redis-benchmark (apt-get install redis-tools)"
fi
# redis-py with ssl=True, verifying the certificate and the address it names
# (Debian's python3-redis, hence Debian's python3).
if /usr/bin/python3 -c 'import redis' 2>/dev/null; then
    timeout 60 /usr/bin/python3 - "$port" "$C/ca.pem" >"$WORK/redis-py" 2>&1 <<'PY'
import sys, redis
r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), ssl=True, ssl_ca_certs=sys.argv[2],
                ssl_cert_reqs="required", ssl_check_hostname=True)
r.set("py-key", "over tls")
print(r.get("py-key").decode(), r.incr("py-counter"), r.connection_pool.get_connection("PING").__class__.__name__)
PY
    check "redis-py with ssl=True and verification sets, gets and counts over tls" "$WORK/redis-py" '^over tls 1 SSLConnection$' "$log"
else
    ok "# SKIP redis-py: no python3-redis"
fi

# Unix stream sockets: tls over the TCP transport's unix: addresses.
sock=$WORK/kvd.sock
log=$WORK/unix.log
"$KVD" --bind "unix:$sock" --transport tls --set tls.cert_file="$C/server.pem" --set tls.key_file="$C/server.key" \
    >"$log" 2>&1 &
pids+=($!)
wait_for "$log" 'listening on unix:' || { echo "Bail out! twinwire-kvd on a Unix socket did not start"; exit 1; }
{ printf 'PING\r\n'; wait_for "$WORK/unix-s" 'PONG' 20; } |
    timeout 30 openssl s_client -unix "$sock" -CAfile "$C/ca.pem" -verify_return_error -no_ign_eof -nocommands \
        >"$WORK/unix-s" 2>&1
check "over a Unix socket: openssl s_client -unix completes a handshake with kvd and gets +PONG" "$WORK/unix-s" '\+PONG' "$log"
out=$(timeout 20 redis-cli -s "$sock" --tls --cacert "$C/ca.pem" --sni localhost PING 2>&1)
if [ "$out" = PONG ]; then ok "over a Unix socket: redis-cli -s --tls gets PONG"; else not_ok "over a Unix socket: redis-cli -s --tls gets PONG: '$out'" "$log"; fi
TWINWIRE_TRANSPORT=tls TWINWIRE_TLS_CA_FILE="$C/ca.pem" TWINWIRE_TLS_SERVER_NAME=localhost \
    timeout 60 "$BENCH" resp --host "unix:$sock" -c 2 -n 200 -t set,get >"$WORK/unix-bench" 2>&1
check "over a Unix socket: a twinwire client (twinwire-bench resp, tls.server_name) gets every reply" "$WORK/unix-bench" \
    '^GET +200 +[0-9]+ .* 0$' "$log"

# IPv6, where the host has ::1.
if ip -6 addr show lo 2>/dev/null | grep -q '::1'; then
    log=$WORK/v6.log
    "$KVD" --bind ::1 --port 0 --transport tls --set tls.cert_file="$C/server.pem" --set tls.key_file="$C/server.key" \
        >"$log" 2>&1 &
    pids+=($!)
    wait_for "$log" 'listening on ::1:[0-9]+' || { echo "Bail out! twinwire-kvd on ::1 did not start"; exit 1; }
    v6port=$(grep -Eo 'listening on ::1:[0-9]+' "$log" | head -1 | sed 's/.*://')
    { printf 'PING\r\n'; wait_for "$WORK/v6-s" 'PONG' 20; } |
        timeout 30 openssl s_client -connect "[::1]:$v6port" -CAfile "$C/ca.pem" -verify_return_error -no_ign_eof \
            -nocommands >"$WORK/v6-s" 2>&1
    check "over IPv6: s_client to [::1] verifies the certificate's IP address ::1 and gets +PONG" "$WORK/v6-s" '\+PONG' "$log"
else
    ok "# SKIP over IPv6: this host has no ::1"
fi

start_kvd ciphers --set tls.ciphers=ECDHE-ECDSA-AES128-GCM-SHA256
talk "$WORK/cipher12" 'PING\r\n' '+PONG' -CAfile "$C/ca.pem" -tls1_2
check "tls.ciphers decides the TLS 1.2 suite" "$WORK/cipher12" 'Cipher is ECDHE-ECDSA-AES128-GCM-SHA256' "$log"
start_kvd only13 --set tls.min_protocol=1.3
talk "$WORK/only13" 'PING\r\n' 'never' -CAfile "$C/ca.pem" -tls1_2
wait_for "$log" 'unsupported protocol' 20
check "with tls.min_protocol = 1.3 a TLS 1.2 client is refused, and the server says why" "$log" \
    'WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: the TLS handshake failed: unsupported protocol'

# --- failures, one log line each -----------------------------------------
silent 3
printf 'PING\r\n' >&3
if eof_within 3 20; then ok "a plaintext client on the TLS port is disconnected"; else not_ok "a plaintext client on the TLS port is disconnected" "$log"; fi
exec 3<&-
wait_for "$log" 'does not speak TLS' 20
check "... and the server says so in one line, quoting what it sent" "$log" \
    "WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: the client does not speak TLS: its first bytes were 'PING\\\\x0d\\\\x0a' \(a plaintext client on a TLS port\?\)"
talk "$WORK/unknown-ca" 'PING\r\n' 'never' -CAfile "$C/rogue-ca.pem" -verify_return_error
check "a client that does not know the server's CA fails verification" "$WORK/unknown-ca" 'certificate verify failed' "$log"
wait_for "$log" 'unknown ca' 20
check "... and the server logs the client's alert" "$log" 'WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: the client refused this end.s certificate: tlsv1 alert unknown ca'
out=$(TWINWIRE_TRANSPORT=tls TWINWIRE_TLS_CA_FILE="$C/ca.pem" TWINWIRE_TLS_SERVER_NAME=elsewhere.example \
    timeout 30 "$BENCH" client --host 127.0.0.1 -p "$port" -n 10 -s 64 -t latency 2>&1)
printf '%s\n' "$out" >"$WORK/mismatch"
check "a twinwire client checks tls.server_name against the certificate: a mismatch fails with the subject" \
    "$WORK/mismatch" 'Permission denied \(TLS with server 127\.0\.0\.1:[0-9]+: the server.s certificate failed verification: hostname mismatch \(subject CN=localhost, depth 0\)\)'
TWINWIRE_TRANSPORT=tls TWINWIRE_TLS_CA_FILE="$C/ca.pem" TWINWIRE_TLS_SERVER_NAME=localhost \
    timeout 60 "$BENCH" resp --host 127.0.0.1 -p "$port" -c 2 -n 200 -t set,get >"$WORK/bench-good" 2>&1
check "... the right name (SNI localhost) connects: twinwire-bench resp gets every reply" "$WORK/bench-good" \
    '^GET +200 +[0-9]+ .* 0$' "$log"

for bad in expired rogue; do
    start_kvd "$bad" --set tls.cert_file="$C/$bad.pem" --set tls.key_file="$C/$bad.key"
    TWINWIRE_TRANSPORT=tls TWINWIRE_TLS_CA_FILE="$C/ca.pem" \
        timeout 30 "$BENCH" client --host 127.0.0.1 -p "$port" -n 10 -s 64 -t latency >"$WORK/bench-$bad" 2>&1
done
check "a twinwire client refuses an expired certificate, with OpenSSL's reason and the subject" "$WORK/bench-expired" \
    'the server.s certificate failed verification: certificate has expired \(subject CN=expired, depth 0\)'
check "a twinwire client refuses a certificate from an unknown CA, with OpenSSL's reason and the subject" "$WORK/bench-rogue" \
    'the server.s certificate failed verification: unable to get local issuer certificate \(subject CN=rogue, depth 0\)'

# --- mutual TLS ------------------------------------------------------------
start_kvd mutual --set tls.verify=required
talk "$WORK/m-good" 'PING\r\n' '+PONG' -CAfile "$C/ca.pem" -cert "$C/client.pem" -key "$C/client.key"
check "mutual TLS: s_client with a client certificate from the CA gets +PONG" "$WORK/m-good" '\+PONG' "$log"
out=$(timeout 20 redis-cli -p "$port" --tls --cacert "$C/ca.pem" --cert "$C/client.pem" --key "$C/client.key" PING 2>&1)
if [ "$out" = PONG ]; then ok "mutual TLS: redis-cli --tls --cert --key gets PONG"; else not_ok "mutual TLS: redis-cli --tls --cert --key gets PONG: '$out'" "$log"; fi
talk "$WORK/m-none" 'PING\r\n' 'never' -CAfile "$C/ca.pem"
wait_for "$log" 'sent no certificate' 20
check "mutual TLS: a client without a certificate is refused, and the server says why" "$log" \
    'WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: the client sent no certificate and tls.verify = required'
talk "$WORK/m-rogue" 'PING\r\n' 'never' -CAfile "$C/ca.pem" -cert "$C/rogue.pem" -key "$C/rogue.key"
wait_for "$log" 'CN=rogue' 20
check "mutual TLS: a client certificate from an unknown CA is refused with OpenSSL's reason and its subject" "$log" \
    "WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: the client's certificate failed verification: unable to get local issuer certificate \(subject CN=rogue, depth 0\)"
if grep -q '+PONG' "$WORK/m-none" "$WORK/m-rogue"; then not_ok "... and neither got a reply" "$WORK/m-none" "$WORK/m-rogue"; else ok "... and neither got a reply"; fi

start_kvd optional --set tls.verify=optional
talk "$WORK/o-rogue" 'PING\r\n' '+PONG' -CAfile "$C/ca.pem" -cert "$C/rogue.pem" -key "$C/rogue.key"
check "tls.verify = optional: a client certificate that fails verification still gets in" "$WORK/o-rogue" '\+PONG' "$log"
check "... and the server says it was not verified, why, and whose it was" "$log" \
    'WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: certificate not verified, accepted as tls.verify = optional: unable to get local issuer certificate \(CN=rogue\)'

# --- bounds ------------------------------------------------------------------
start_kvd bounded --set tls.handshake_timeout_ms=500
silent 3
if eof_within 3 20; then ok "a handshake that never starts is cut off"; else not_ok "a handshake that never starts is cut off" "$log"; fi
exec 3<&-
check "... with one line naming tls.handshake_timeout_ms" "$log" \
    'WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: the handshake did not complete within 500 ms \(tls\.handshake_timeout_ms\)'
start_kvd busy --set tls.max_handshakes=2 --set tls.handshake_timeout_ms=60000
silent 3
silent 4
# Both are in flight once the server has accepted them; the next one is
# refused at once (under load, one more may be needed before they are).
refused=
for fd in 5 6 7; do
    silent $fd
    if eof_within $fd 5; then refused=$fd && break; fi
done
if [ -n "$refused" ]; then ok "past tls.max_handshakes in flight a new connection is closed at once"; else not_ok "past tls.max_handshakes in flight a new connection is closed at once" "$log"; fi
check "... with one line naming tls.max_handshakes" "$log" \
    'WARN \[tls\] TLS from 127\.0\.0\.1:[0-9]+: refused: 2 handshakes already in flight \(tls\.max_handshakes\)'
exec 3<&- 4<&- 5<&- 6<&- 7<&-
wait_for "$log" 'closed the connection during the handshake.*\n?' 20
talk "$WORK/after-busy" 'PING\r\n' '+PONG' -CAfile "$C/ca.pem"
check "... and once those close, a client gets through" "$WORK/after-busy" '\+PONG' "$log"

# --- certificates reloaded on SIGHUP -------------------------------------------
L=$WORK/live
mkdir -p "$L"
cp "$C/server.pem" "$L/cert.pem"
cp "$C/server.key" "$L/cert.key"
start_kvd reload --set tls.cert_file="$L/cert.pem" --set tls.key_file="$L/cert.key"
kvd_pid=${pids[-1]}
# served_subject OUT: the subject of the certificate a new connection gets.
served_subject() {
    timeout 20 openssl s_client -connect "127.0.0.1:$port" -CAfile "$C/ca.pem" </dev/null 2>/dev/null |
        openssl x509 -noout -subject >"$1" 2>&1
}
# A session that stays open across the reloads.
hold held "$port"
printf 'ECHO before-reload\r\n' >&"$held_fd"
wait_for "$WORK/held.out" 'before-reload'
cp "$C/renewed.pem" "$L/cert.pem"
cp "$C/renewed.key" "$L/cert.key"
kill -HUP "$kvd_pid"
wait_for "$log" 'credentials reloaded'
check "SIGHUP reads the certificate files again: one log line names the new certificate" "$log" \
    'INFO \[credentials\] tls: credentials reloaded: CN=renewed, expires '
served_subject "$WORK/subject-renewed"
check "... a new connection gets the renewed certificate (openssl s_client | openssl x509 -subject)" \
    "$WORK/subject-renewed" '^subject=CN ?= ?renewed$' "$log"
printf 'ECHO after-reload\r\n' >&"$held_fd"
wait_for "$WORK/held.out" 'after-reload'
check "... and a session opened before the reload goes on answering" "$WORK/held.out" 'after-reload' "$log"
check "... with the certificate it began with" "$WORK/held.out" 'subject=CN ?= ?localhost'
out=$(timeout 20 redis-cli -p "$port" --tls --cacert "$C/ca.pem" PING 2>&1)
if [ "$out" = PONG ]; then ok "... redis-cli --tls connects after the reload"; else not_ok "... redis-cli --tls after the reload: '$out'" "$log"; fi
echo 'not a certificate' >"$L/cert.pem"
kill -HUP "$kvd_pid"
wait_for "$log" 'credentials not reloaded'
check "SIGHUP with a broken certificate file keeps the old certificate, naming the file and OpenSSL's reason" "$log" \
    "ERROR \[credentials\] tls: credentials not reloaded, the old ones stay: tls.cert_file = '$L/cert.pem' is not a PEM certificate chain: no start line"
served_subject "$WORK/subject-kept"
check "... and new connections still get the renewed certificate" "$WORK/subject-kept" '^subject=CN ?= ?renewed$' "$log"
printf 'ECHO after-failed-reload\r\n' >&"$held_fd"
wait_for "$WORK/held.out" 'after-failed-reload'
check "... and the open session still answers" "$WORK/held.out" 'after-failed-reload' "$log"
exec {held_fd}>&-

# --- plain and TLS side by side, each on its own port ---------------------------
log=$WORK/two-ports.log
"$KVD" --port 0 --transport tcp,tls --set tls.listen_port=0 --set tls.cert_file="$C/server.pem" \
    --set tls.key_file="$C/server.key" --set status_socket="$WORK/status" >"$log" 2>&1 &
pids+=($!)
wait_for "$log" 'serving on' || { echo "Bail out! twinwire-kvd with tcp,tls did not start"; sed 's/^/#   /' "$log"; exit 1; }
check "transport = tcp,tls with tls.listen_port: one line names each transport's port" "$log" \
    'listening on 127\.0\.0\.1:[0-9]+ over tcp and 127\.0\.0\.1:[0-9]+ over tls'
check "... and the serving line names the TLS port" "$log" 'serving on 127\.0\.0\.1:[0-9]+ over tcp\+tls \(tls on port [0-9]+\)'
plain_port=$(grep -Eo 'listening on 127\.0\.0\.1:[0-9]+ over tcp' "$log" | sed 's/.*://;s/ .*//')
tls_port=$(grep -Eo '127\.0\.0\.1:[0-9]+ over tls' "$log" | head -1 | sed 's/.*://;s/ .*//')
if [ -n "$plain_port" ] && [ -n "$tls_port" ] && [ "$plain_port" != "$tls_port" ]; then
    ok "... two different ports: $plain_port (tcp), $tls_port (tls)"
else
    not_ok "... two different ports: '$plain_port' '$tls_port'" "$log"
fi
out=$(timeout 20 redis-cli -p "$plain_port" SET side by-side 2>&1; timeout 20 redis-cli -p "$tls_port" --tls --cacert "$C/ca.pem" GET side 2>&1)
if [ "$out" = "$(printf 'OK\nby-side')" ]; then ok "redis-cli sets a key on the plain port and redis-cli --tls reads it on the TLS port"
else not_ok "redis-cli on both ports: '$out'" "$log"; fi
# A session held open over each, then INFO counts them per transport.
hold tls-held "$tls_port"
printf 'PING\r\n' >&"$held_fd"
wait_for "$WORK/tls-held.out" 'PONG'
timeout 20 redis-cli -p "$plain_port" INFO transport >"$WORK/info-two" 2>&1
check "INFO counts the connections per transport: the TLS session held open" "$WORK/info-two" '^connected_clients_tls:1' "$log"
check "... and the plain one asking" "$WORK/info-two" '^connected_clients_tcp:1' "$log"
# The INFO client has gone: asked until the daemon has seen it go (a bound, not a delay).
for _ in $(seq 100); do
    timeout 20 "$INFO" --status "$WORK/status" >"$WORK/status-two" 2>&1
    grep -q 'tcp  *0 connections' "$WORK/status-two" && break
    sleep 0.1
done
check "twinwire-info --status names the daemon and its one connection" "$WORK/status-two" \
    "^twinwire-kvd \(pid [0-9]+\) on $WORK/status: 1 connection\$" "$log"
check "... tls with the session held open, on its port" "$WORK/status-two" \
    "^  tls +1 connection, listening on 127\.0\.0\.1:$tls_port\$" "$log"
check "... tcp with none now, on its port" "$WORK/status-two" \
    "^  tcp +0 connections, listening on 127\.0\.0\.1:$plain_port\$" "$log"
timeout 20 "$INFO" --status "$WORK/status" --json >"$WORK/status-two.json" 2>&1
check "... and as JSON" "$WORK/status-two.json" "\{\"name\": \"tls\", \"connections\": 1, \"listening\": \[\"127\.0\.0\.1:$tls_port\"\]\}" "$log"
exec {held_fd}>&-
timeout 20 redis-cli -p "$tls_port" PING >/dev/null 2>&1
wait_for "$log" 'does not speak TLS' 10
check "a plaintext client on the TLS port: one line says so" "$log" 'the client does not speak TLS: its first bytes were'
timeout 20 redis-cli -p "$plain_port" --tls --cacert "$C/ca.pem" PING >"$WORK/tls-on-plain" 2>&1
wait_for "$log" 'a TLS handshake on a plaintext port' 10
check "a TLS client on the plain port: one line says so" "$log" 'over tcp: Protocol error: a TLS handshake on a plaintext port'
out=$(timeout 30 "$KVD" --check-config --transport tcp,tls --set tls.listen_port=70000 2>&1)
printf '%s\n' "$out" >"$WORK/bad-port"
check "a tls.listen_port that is not a port is refused with the key, the value and the reason" "$WORK/bad-port" \
    "tls.listen_port = '70000' \(command line --set\): expected a port, 0 to 65535"

# --- tls.* keys, checked without init -----------------------------------------
cfg() { # cfg EXPECTED-STATUS TEXT KEY=VALUE...
    local want=$1 text=$2 args=() out got
    shift 2
    for kv in "$@"; do args+=(--set "$kv"); done
    out=$("$KVD" --check-config --transport tcp "${args[@]}" 2>&1)
    got=$?
    if [ "$got" -eq "$want" ] && printf '%s' "$out" | grep -qF -- "$text"; then
        ok "--check-config $*: $text"
    else
        printf '%s\n' "$out" >"$WORK/cfg"
        not_ok "--check-config $*: status $got (expected $want with '$text')" "$WORK/cfg"
    fi
}
cfg 1 "tls.verify = 'maybe' (command line --set): expected off, optional or required" tls.verify=maybe
cfg 1 "tls.min_protocol = '1.1' (command line --set): expected 1.2 or 1.3" tls.min_protocol=1.1
cfg 1 "tls.cert_file = '/nonexistent.pem' (command line --set): cannot be read: No such file or directory" \
    tls.cert_file=/nonexistent.pem tls.key_file="$C/server.key"
cfg 1 "tls.ca_dir = '$C/ca.pem' (command line --set): not a directory" tls.ca_dir="$C/ca.pem"
cfg 1 "tls.ca_file = '$C' (command line --set): not a regular file" tls.ca_file="$C"
cfg 1 "tls.key_file = '$C/server.key' (command line --set): needs tls.cert_file too" tls.key_file="$C/server.key"
cfg 1 "tls.ciphers = 'NO-SUCH-CIPHER' (command line --set): no TLS 1.2 cipher OpenSSL knows" tls.ciphers=NO-SUCH-CIPHER
cfg 1 "tls.ciphersuites = 'TLS_NO_SUCH' (command line --set): expected TLS 1.3 suites OpenSSL knows" tls.ciphersuites=TLS_NO_SUCH
cfg 1 "tls.server_name = '127.0.0.1' (command line --set): an IP address is not a server name" tls.server_name=127.0.0.1
cfg 1 "tls.server_name = 'a b' (command line --set): expected a host name" "tls.server_name=a b"
cfg 1 "tls.session_resumption = 'maybe' (command line --set): expected yes or no" tls.session_resumption=maybe
cfg 1 "tls.handshake_timeout_ms = '0' (command line --set): expected 1..3600000" tls.handshake_timeout_ms=0
cfg 1 "tls.max_handshakes = 'lots' (command line --set): expected a whole number" tls.max_handshakes=lots
cfg 1 "tls.ktls = 'on' (command line --set): expected auto (the kernel's tls ULP where it has one) or off" tls.ktls=on
cfg 1 "tls.inner = 'tls' (command line --set): expected another transport: tls cannot wrap itself" tls.inner=tls
cfg 1 "unknown key(s) for the tls transport: tls.bogus" tls.bogus=1
cfg 0 "tls.verify = required" tls.cert_file="$C/server.pem" tls.key_file="$C/server.key" tls.ca_file="$C/ca.pem" \
    tls.verify=required tls.min_protocol=1.3 tls.ciphersuites=TLS_AES_128_GCM_SHA256 tls.server_name=localhost
# What only OpenSSL can judge is refused at start-up, naming the key.
out=$(timeout 30 "$KVD" --port 0 --transport tls --set tls.cert_file="$C/ca.key" --set tls.key_file="$C/server.key" 2>&1)
printf '%s\n' "$out" >"$WORK/not-pem"
check "a key file given as tls.cert_file stops start-up, naming the key and the reason" "$WORK/not-pem" \
    "tls.cert_file = '$C/ca.key' is not a PEM certificate chain"
out=$(timeout 30 "$KVD" --port 0 --transport tls --set tls.cert_file="$C/server.pem" --set tls.key_file="$C/client.key" 2>&1)
printf '%s\n' "$out" >"$WORK/wrong-key"
check "a key that is not the certificate's stops start-up, naming the key" "$WORK/wrong-key" \
    "tls.key_file = '$C/client.key' does not belong to tls.cert_file"
out=$(timeout 30 "$KVD" --port 0 --transport tls --set tls.cert_file="$C/server.pem" --set tls.key_file="$C/server.pem" 2>&1)
printf '%s\n' "$out" >"$WORK/not-key"
check "a file that holds no private key, given as tls.key_file, stops start-up, naming the key" "$WORK/not-key" \
    "tls.key_file = '$C/server.pem' is not an unencrypted PEM private key"

# --- kTLS: twinwire-info says whether this kernel takes the records, and why not
timeout 30 "$INFO" --transport tls >"$WORK/info-tls" 2>&1
TWINWIRE_TRANSPORT=tls TWINWIRE_TLS_KTLS=off timeout 30 "$INFO" >"$WORK/info-tls-off" 2>&1
if grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null || [ -e /sys/module/tls ]; then
    check "twinwire-info: this kernel offers the tls ULP, and TLS 1.2 sessions over tcp hand it their records" "$WORK/info-tls" \
        '^  ktls: in use for TLS 1.2: 0 sessions on the socket; the kernel seals the records of 0 and opens those of 0'
    check "twinwire-info: with tls.ktls = off the plugin says so" "$WORK/info-tls-off" \
        '^  ktls: off: tls.ktls = off \(this kernel offers the tls ULP\)'
else
    check "twinwire-info: this kernel has no tls ULP, and the plugin says so" "$WORK/info-tls" \
        "^  ktls: unavailable: this kernel offers no tls ULP \(tcp_available_ulp: $(cat /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null)"
fi

echo "1..$n"
exit $failed
