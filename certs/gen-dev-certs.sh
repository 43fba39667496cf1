#!/usr/bin/env bash
# Creates a development CA and a serving certificate for aiadmit with OpenSSL.
#
#   certs/gen-dev-certs.sh [OUT_DIR] [DAYS]
#
# OUT_DIR (default certs/dev) receives ca.crt, ca.key, tls.crt, tls.key.
# The serving certificate is valid for localhost, 127.0.0.1, ::1 and the
# in-cluster Service names aiadmit.aiadmit-system.svc(.cluster.local).
# Set AIADMIT_SERVICE / AIADMIT_NAMESPACE to name another Service.
set -euo pipefail

out=${1:-"$(dirname "$0")/dev"}
days=${2:-365}
service=${AIADMIT_SERVICE:-aiadmit}
namespace=${AIADMIT_NAMESPACE:-aiadmit-system}

mkdir -p "$out"
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$tmp/ca.key" -out "$tmp/ca.crt" -days "$days" \
  -subj "/CN=aiadmit-dev-ca" \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

cat > "$tmp/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1,DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local
EXT

openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$tmp/tls.key" -out "$tmp/tls.csr" \
  -subj "/CN=${service}.${namespace}.svc" 2>/dev/null
openssl x509 -req -in "$tmp/tls.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" \
  -CAcreateserial -out "$tmp/tls.crt" -days "$days" -extfile "$tmp/server.ext" 2>/dev/null

# Move into place last, so a reader never sees a half-written pair.
for f in ca.key ca.crt tls.key tls.crt; do
  chmod 600 "$tmp/$f"
  mv -f "$tmp/$f" "$out/$f"
done
chmod 644 "$out/ca.crt" "$out/tls.crt"
echo "wrote $out/ca.crt $out/tls.crt $out/tls.key (valid $days days)"
