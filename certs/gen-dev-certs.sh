#!/usr/bin/env bash
# Creates a development CA and a serving certificate for aiadmit with OpenSSL.
#
#   certs/gen-dev-certs.sh [OUT_DIR] [DAYS]
#
# OUT_DIR (default certs/dev) receives ca.crt, ca.key, tls.crt, tls.key.
# The serving certificate is valid for localhost, 127.0.0.1, ::1 and the
# in-cluster Service names aiadmit.aiadmit-system.svc(.cluster.local).
# Set AIADMIT_SERVICE / AIADMIT_NAMESPACE to name another Service.
# For a cluster, use certs/webhook-certs.sh: it keeps the CA across renewals
# and writes the Secret the manifests expect.
set -euo pipefail

here=$(dirname "$0")
# shellcheck source=certs/pki.sh
source "$here/pki.sh"

out=${1:-"$here/dev"}
days=${2:-365}
service=${AIADMIT_SERVICE:-aiadmit}
namespace=${AIADMIT_NAMESPACE:-aiadmit-system}

mkdir -p "$out"
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pki_new_ca "$tmp/ca.key" "$tmp/ca.crt" "$days" "aiadmit-dev-ca"
pki_new_serving_cert "$tmp/tls.key" "$tmp/tls.crt" "$tmp/ca.crt" "$tmp/ca.key" "$days" \
  "${service}.${namespace}.svc" \
  "DNS:localhost,IP:127.0.0.1,IP:::1,DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local"

# Move into place last, so a reader never sees a half-written pair.
for f in ca.key ca.crt tls.key tls.crt; do
  chmod 600 "$tmp/$f"
  mv -f "$tmp/$f" "$out/$f"
done
chmod 644 "$out/ca.crt" "$out/tls.crt"
echo "wrote $out/ca.crt $out/tls.crt $out/tls.key (valid $days days)"
