#!/bin/sh
# Generate throw-away test PKI into $1 (nothing private is committed):
#   ca.pem/ca.key        test CA
#   server.pem/.key      server cert for 127.0.0.1 / localhost, signed by ca
#   client.pem/.key      client cert (CN=twl-test-client), signed by ca
#   other-ca.pem         an unrelated CA (the agent must refuse servers it signed)
#   other-server.pem/.key server cert signed by other-ca
set -eu
d=$1
mkdir -p "$d"
cd "$d"
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
mkca() { # name cn
	ec "$1.key"
	openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
mkleaf() { # name ca cn ext
	ec "$1.key"
	openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$3" 2>/dev/null
	printf '%s\n' "$4" > "$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial \
		-out "$1.pem" -days 2 -extfile "$1.ext" 2>/dev/null
}
mkca ca twl-test-ca
mkca other-ca twl-other-ca
mkleaf server ca localhost "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
mkleaf client ca twl-test-client "extendedKeyUsage=clientAuth"
mkleaf other-server other-ca localhost "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
chmod 600 ./*.key
