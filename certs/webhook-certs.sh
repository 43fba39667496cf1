#!/usr/bin/env bash
# Certificates for aiadmit in a cluster without cert-manager.
#
#   certs/webhook-certs.sh [options] PKI_DIR
#
# PKI_DIR keeps the CA between runs (ca.crt, ca.key: keep them private and
# backed up; they are never put in the cluster). Each run:
#   - creates the CA when PKI_DIR has none (valid --ca-days, default 3650);
#   - issues a new serving certificate and key for the Service
#     (aiadmit.aiadmit-system.svc and .svc.cluster.local; valid --days,
#     default 365) into PKI_DIR/tls.crt and PKI_DIR/tls.key;
#   - writes the TLS Secret manifest (default
#     manifests/overlays/script-certs/tls-secret.yaml): tls.crt, tls.key and
#     ca.crt, the CA bundle that the overlay copies into the caBundle of every
#     webhook of both webhook configurations, and that `serve --client-ca`
#     trusts callers by (manifests/components/client-ca);
#   - issues the client certificate the API server presents to aiadmit
#     (PKI_DIR/apiserver-client.crt and .key, CN kube-apiserver, valid
#     --days) and writes the API server's side of mutual TLS:
#     PKI_DIR/admission-kubeconfig.yaml (that certificate, for the Service's
#     name) and PKI_DIR/admission-config.yaml (the AdmissionConfiguration
#     that points both webhook plugins at it, in --apiserver-config-dir).
# Then: kubectl apply -k manifests/overlays/script-certs
# (docs/install.md, "Mutual TLS", says where the two admission files go.)
#
# Renewing the serving certificate is the same command again: the CA and so
# the caBundle stay the same, and the running pods pick up the new pair from
# the updated Secret without a restart.
#
# Rotating the CA takes two runs, with an apply after each:
#   --rotate-ca            new CA, serving certificate signed by it; the
#                          bundle trusts the new and the previous CA, so
#                          pods still serving the old certificate are trusted
#   --finish-ca-rotation   once every pod serves the new certificate (log
#                          line "certificate reloaded"): the bundle trusts
#                          the new CA only; the serving pair is kept
#
# Options:
#   --namespace NS       namespace of the Service (default aiadmit-system)
#   --service NAME       name of the Service (default aiadmit)
#   --secret-name NAME   name of the Secret (default aiadmit-tls)
#   --secret FILE        where to write the Secret manifest
#   --days N             serving certificate validity in days (default 365)
#   --ca-days N          validity of a new CA in days (default 3650)
#   --apiserver-config-dir DIR
#                        where admission-kubeconfig.yaml will be on the
#                        control-plane nodes (default /etc/kubernetes/aiadmit)
#   -h, --help           this help
#
# Needs bash and OpenSSL 1.1.1 or newer.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=certs/pki.sh
source "$here/pki.sh"

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit "${1:-0}"
}
fail() {
  echo "webhook-certs.sh: $*" >&2
  exit 1
}

namespace=aiadmit-system
service=aiadmit
secret_name=aiadmit-tls
secret_file="$here/../manifests/overlays/script-certs/tls-secret.yaml"
days=365
ca_days=3650
apiserver_config_dir=/etc/kubernetes/aiadmit
mode=issue
pki_dir=

while [ $# -gt 0 ]; do
  case "$1" in
    --namespace) namespace=${2:?--namespace needs a value}; shift 2 ;;
    --service) service=${2:?--service needs a value}; shift 2 ;;
    --secret-name) secret_name=${2:?--secret-name needs a value}; shift 2 ;;
    --secret) secret_file=${2:?--secret needs a value}; shift 2 ;;
    --days) days=${2:?--days needs a value}; shift 2 ;;
    --ca-days) ca_days=${2:?--ca-days needs a value}; shift 2 ;;
    --apiserver-config-dir) apiserver_config_dir=${2:?--apiserver-config-dir needs a value}; shift 2 ;;
    --rotate-ca) mode=rotate; shift ;;
    --finish-ca-rotation) mode=finish; shift ;;
    -h | --help) usage 0 ;;
    -*) echo "webhook-certs.sh: unknown option $1" >&2; usage 2 >&2 ;;
    *)
      [ -z "$pki_dir" ] || fail "one PKI_DIR only (got $pki_dir and $1)"
      pki_dir=$1
      shift
      ;;
  esac
done
[ -n "$pki_dir" ] || { echo "webhook-certs.sh: PKI_DIR is required" >&2; usage 2 >&2; }
for n in "$days" "$ca_days"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || fail "validity must be a positive number of days, got \"$n\""
done
for name in "$namespace" "$service" "$secret_name"; do
  [[ "$name" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || fail "\"$name\" is not a valid Kubernetes name"
done

mkdir -p "$pki_dir"
umask 077
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

dns="${service}.${namespace}.svc"
ca_name() { echo "aiadmit webhook CA $(date -u +%Y-%m-%dT%H:%M:%SZ)"; }

has_ca_cert=no has_ca_key=no
[ ! -e "$pki_dir/ca.crt" ] || has_ca_cert=yes
[ ! -e "$pki_dir/ca.key" ] || has_ca_key=yes
if [ "$has_ca_cert" != "$has_ca_key" ]; then
  fail "$pki_dir has only one of ca.crt and ca.key; restore the other from your backup"
fi

case "$mode" in
  issue)
    if [ ! -e "$pki_dir/ca.crt" ]; then
      pki_new_ca "$work/ca.key" "$work/ca.crt" "$ca_days" "$(ca_name)" || fail "cannot create the CA"
      mv "$work/ca.key" "$work/ca.crt" "$pki_dir/"
      echo "created a CA in $pki_dir (valid $ca_days days)"
    fi
    ;;
  rotate)
    [ -e "$pki_dir/ca.crt" ] || fail "$pki_dir has no CA to rotate"
    [ ! -e "$pki_dir/ca-previous.crt" ] ||
      fail "a CA rotation is already under way; finish it with --finish-ca-rotation"
    pki_new_ca "$work/ca.key" "$work/ca.crt" "$ca_days" "$(ca_name)" || fail "cannot create the CA"
    # The old CA stays trusted until the rotation is finished; its key is no
    # longer needed, since it will sign nothing again.
    mv "$pki_dir/ca.crt" "$pki_dir/ca-previous.crt"
    rm -f "$pki_dir/ca.key"
    mv "$work/ca.key" "$work/ca.crt" "$pki_dir/"
    echo "created a new CA in $pki_dir; the previous one stays trusted until --finish-ca-rotation"
    ;;
  finish)
    [ -e "$pki_dir/ca-previous.crt" ] || fail "no CA rotation is under way in $pki_dir"
    if [ ! -e "$pki_dir/tls.crt" ] || [ ! -e "$pki_dir/tls.key" ]; then
      fail "$pki_dir has no serving certificate"
    fi
    openssl verify -CAfile "$pki_dir/ca.crt" "$pki_dir/tls.crt" >/dev/null 2>&1 ||
      fail "$pki_dir/tls.crt is not signed by the current CA; issue one first (run without options)"
    rm -f "$pki_dir/ca-previous.crt"
    ;;
esac

ca_end=$(pki_end_date "$pki_dir/ca.crt")
if pki_expires_within "$pki_dir/ca.crt" $((90 * 86400)); then
  echo "warning: the CA expires on $ca_end, in less than 90 days; plan a --rotate-ca" >&2
fi
if [ "$mode" != finish ]; then
  # A serving certificate that outlives its CA would fail at the CA's end
  # without warning: rotate the CA before it comes to that.
  if pki_expires_within "$pki_dir/ca.crt" $((days * 86400)); then
    fail "the CA expires on $ca_end, before a $days-day certificate would; run with --rotate-ca (or a smaller --days)"
  fi
  pki_new_serving_cert "$work/tls.key" "$work/tls.crt" "$pki_dir/ca.crt" "$pki_dir/ca.key" "$days" \
    "$dns" "DNS:${dns},DNS:${dns}.cluster.local" || fail "cannot issue the serving certificate"
  openssl verify -CAfile "$pki_dir/ca.crt" "$work/tls.crt" >/dev/null || fail "the new certificate does not verify"
  # The API server's certificate for aiadmit, from the same CA, renewed
  # with the serving pair.
  pki_new_client_cert "$work/apiserver-client.key" "$work/apiserver-client.crt" \
    "$pki_dir/ca.crt" "$pki_dir/ca.key" "$days" kube-apiserver ||
    fail "cannot issue the API server's client certificate"
  mv "$work/tls.key" "$work/tls.crt" "$work/apiserver-client.key" "$work/apiserver-client.crt" \
    "$pki_dir/"
fi

# The trust bundle: the current CA, and the previous one while a rotation runs.
cat "$pki_dir/ca.crt" >"$work/ca-bundle.crt"
[ ! -e "$pki_dir/ca-previous.crt" ] || cat "$pki_dir/ca-previous.crt" >>"$work/ca-bundle.crt"
mv "$work/ca-bundle.crt" "$pki_dir/ca-bundle.crt"
chmod 644 "$pki_dir/ca.crt" "$pki_dir/ca-bundle.crt" "$pki_dir/tls.crt"
[ ! -e "$pki_dir/ca-previous.crt" ] || chmod 644 "$pki_dir/ca-previous.crt"

b64() { openssl base64 -A -in "$1"; }

# The API server's side of mutual TLS: the kubeconfig entry is found by the
# name of the Service the webhooks call (port 443), and holds the client
# certificate inline, so that one file is copied to each control-plane node.
if [ -e "$pki_dir/apiserver-client.crt" ]; then
  cat >"$work/admission-kubeconfig.yaml" <<YAML
# Written by certs/webhook-certs.sh: the client certificate kube-apiserver
# presents to aiadmit (serve --client-ca). Holds a private key.
apiVersion: v1
kind: Config
users:
  - name: ${dns}
    user:
      client-certificate-data: $(b64 "$pki_dir/apiserver-client.crt")
      client-key-data: $(b64 "$pki_dir/apiserver-client.key")
YAML
  cat >"$work/admission-config.yaml" <<YAML
# Written by certs/webhook-certs.sh: kube-apiserver --admission-control-config-file.
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ValidatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: ${apiserver_config_dir}/admission-kubeconfig.yaml
  - name: MutatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: ${apiserver_config_dir}/admission-kubeconfig.yaml
YAML
  mv "$work/admission-kubeconfig.yaml" "$work/admission-config.yaml" "$pki_dir/"
  chmod 644 "$pki_dir/apiserver-client.crt" "$pki_dir/admission-config.yaml"
fi
mkdir -p "$(dirname "$secret_file")"
cat >"$work/secret.yaml" <<YAML
# Written by certs/webhook-certs.sh. Holds a private key: keep it out of git
# (or seal it) and apply it with the script-certs overlay.
apiVersion: v1
kind: Secret
metadata:
  name: ${secret_name}
  namespace: ${namespace}
  labels:
    app.kubernetes.io/name: aiadmit
    app.kubernetes.io/part-of: aiadmit
type: kubernetes.io/tls
data:
  ca.crt: $(b64 "$pki_dir/ca-bundle.crt")
  tls.crt: $(b64 "$pki_dir/tls.crt")
  tls.key: $(b64 "$pki_dir/tls.key")
YAML
mv "$work/secret.yaml" "$secret_file"

echo "serving certificate for ${dns}: valid until $(pki_end_date "$pki_dir/tls.crt")"
echo "CA: valid until ${ca_end}$([ -e "$pki_dir/ca-previous.crt" ] && echo "; the previous CA is still trusted")"
echo "wrote $secret_file"
[ ! -e "$pki_dir/admission-config.yaml" ] ||
  echo "wrote $pki_dir/admission-config.yaml and admission-kubeconfig.yaml for kube-apiserver (docs/install.md, \"Mutual TLS\")"
