#!/bin/sh
# Test certificates, made at test time (no private key is ever committed):
#   make-certs.sh DIR
# DIR/ca.pem                        the test CA
# DIR/server.pem, server.key        localhost and 127.0.0.1, serverAuth and
#                                   clientAuth (one process plays both ends
#                                   under mutual TLS in the conformance kit)
# DIR/renewed.pem, renewed.key      as server.pem, another key and CN=renewed
#                                   (what a reload puts in its place)
# DIR/client.pem, client.key        a client certificate from the same CA
# DIR/expired.pem, expired.key      from the same CA, expired in 2021
# DIR/rogue-ca.pem, rogue.pem, rogue.key   another CA, and a certificate for
#                                   localhost/127.0.0.1 from it (an unknown CA)
# DIR/cadir/                        the test CA as a directory (openssl rehash)
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
quiet() { "$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; "$@" >&2; exit 1; }; }

ca() { # ca NAME SUBJECT
    quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
        -subj "$2" -keyout "$1.key" -out "$1.pem" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
# leaf NAME SUBJECT CA EXTENSIONS [openssl ca dates]
leaf() {
    name=$1 subject=$2 issuer=$3 ext=$4
    shift 4
    quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subject" \
        -keyout "$name.key" -out "$name.csr"
    printf '%s\n' "$ext" >"$name.ext"
    if [ $# -gt 0 ]; then
        # openssl ca sets any validity period, an expired one included.
        mkdir -p "$issuer.db"
        : >"$issuer.db/index.txt"
        [ -f "$issuer.db/serial" ] || echo 1000 >"$issuer.db/serial"
        cat >"$issuer.cnf" <<CNF
[ca]
default_ca = test_ca
[test_ca]
database = $issuer.db/index.txt
serial = $issuer.db/serial
new_certs_dir = $issuer.db
certificate = $issuer.pem
private_key = $issuer.key
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
CNF
        quiet openssl ca -batch -config "$issuer.cnf" -in "$name.csr" -out "$name.pem" -notext \
            -extfile "$name.ext" "$@"
    else
        quiet openssl x509 -req -in "$name.csr" -CA "$issuer.pem" -CAkey "$issuer.key" -CAcreateserial \
            -days 30 -sha256 -extfile "$name.ext" -out "$name.pem"
    fi
    rm -f "$name.csr" "$name.ext"
}

server_ext='subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1
extendedKeyUsage=serverAuth,clientAuth'
ca ca "/CN=twinwire test CA"
leaf server "/CN=localhost" ca "$server_ext"
leaf renewed "/CN=renewed" ca "$server_ext"
leaf client "/CN=twinwire test client" ca 'extendedKeyUsage=clientAuth'
leaf expired "/CN=expired" ca "$server_ext" -startdate 20200101000000Z -enddate 20210101000000Z
ca rogue-ca "/CN=rogue CA"
leaf rogue "/CN=rogue" rogue-ca "$server_ext"
# The CA again as a hashed directory, for tls.ca_dir.
mkdir -p cadir
cp ca.pem cadir/
quiet openssl rehash cadir
chmod 600 ./*.key
