#!/bin/sh
# Test certificates for chessd's TLS connections to Redis (CUnit, e2e and
# cluster tests): `tests/tls/make_certs.sh DIR` writes into DIR, with the
# openssl CLI, EC P-256 keys and PEM certificates valid from 2000 to the end of
# 2049 (whatever a container's clock says) unless said otherwise:
#   ca.crt ca.key               the test CA (trust it with --redis-ca-file)
#   other-ca.crt other-ca.key   a second CA that nothing trusts
#   server.crt server.key       by ca, for DNS:localhost, IP:127.0.0.1 and IP:::1
#   wrong.crt wrong.key         by ca, for DNS:wrong.example only
#   expired.crt expired.key     by ca, for localhost/127.0.0.1/::1, expired since 2020-01-02
#   unknown-ca.crt unknown-ca.key  by other-ca, for localhost/127.0.0.1/::1
#   client.crt client.key       by ca, a client certificate (CN=chessd test client)
#   client-encrypted.key        client.key encrypted with the passphrase "chessd"
# Server certificates allow clientAuth too, since redis-server presents its
# tls-cert-file as a client to other nodes (--tls-cluster, --tls-replication).
# openssl.cnf, index.txt and serial are the tool's own records. Running it
# again over a complete, still valid set changes nothing; otherwise it makes
# every file anew. No prompts; a fraction of a second. Two runs at once on
# one DIR are not safe: give each test run its own DIR, or make it first.
set -eu

dir=${1:?usage: make_certs.sh DIR}
mkdir -p "$dir"
cd "$dir"

files="ca.crt ca.key other-ca.crt other-ca.key server.crt server.key wrong.crt wrong.key expired.crt
expired.key unknown-ca.crt unknown-ca.key client.crt client.key client-encrypted.key"
complete=yes
for f in $files; do [ -s "$f" ] || complete=no; done
if [ "$complete" = yes ] \
    && openssl verify -CAfile ca.crt server.crt wrong.crt client.crt >/dev/null 2>&1 \
    && openssl verify -CAfile other-ca.crt unknown-ca.crt >/dev/null 2>&1 \
    && openssl x509 -in server.crt -noout -checkend 86400 >/dev/null 2>&1; then
    exit 0
fi

# shellcheck disable=SC2086 # $files is a list
rm -f $files index.txt index.txt.* serial serial.*
rm -rf issued
mkdir issued

cat > openssl.cnf <<'CNF'
# Written by tests/tls/make_certs.sh: requests, the CAs and the test certificates' extensions.
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
default_ca = test_ca
[test_ca]
database = index.txt
serial = serial
new_certs_dir = issued
default_md = sha256
policy = any_policy
unique_subject = no
copy_extensions = none
[any_policy]
commonName = supplied
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
authorityKeyIdentifier = keyid
[wrong_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:wrong.example
authorityKeyIdentifier = keyid
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
CNF
: > index.txt
echo 1000 > serial
export OPENSSL_CONF="$PWD/openssl.cnf"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

# issue NAME CN ISSUER EXTENSIONS [START END]: a new key and its certificate,
# signed by ISSUER's key (by its own when ISSUER is NAME).
issue() {
    name=$1 cn=$2 issuer=$3 ext=$4 start=${5:-20000101000000Z} end=${6:-20491231235959Z}
    key "$name"
    openssl req -config openssl.cnf -new -key "$name.key" -subj "/CN=$cn" -out "$name.csr"
    if [ "$issuer" = "$name" ]; then
        set -- -selfsign -keyfile "$name.key"
    else
        set -- -cert "$issuer.crt" -keyfile "$issuer.key"
    fi
    openssl ca -config openssl.cnf -batch -notext "$@" -extensions "$ext" -startdate "$start" -enddate "$end" \
        -in "$name.csr" -out "$name.crt" 2>/dev/null
    rm -f "$name.csr"
}

issue ca "chessd test CA" ca ca_ext
issue other-ca "chessd unrelated test CA" other-ca ca_ext
issue server localhost ca server_ext
issue wrong wrong.example ca wrong_ext
issue expired localhost ca server_ext 20200101000000Z 20200102000000Z
issue unknown-ca localhost other-ca server_ext
issue client "chessd test client" ca client_ext
openssl pkey -in client.key -aes256 -passout pass:chessd -out client-encrypted.key
rm -rf issued # openssl ca's copies of what it issued
chmod 644 ./*.crt ./*.key # test keys, readable by a redis-server running as another user
