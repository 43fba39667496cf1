# shellcheck shell=bash
# The operators of `scripts/e2e-cluster up DIR --operators`, sourced by
# scripts/e2e-cluster: JobSet, LeaderWorkerSet, KubeRay and Kueue, built from
# their Go modules by scripts/build-operators and each run as a process
# beside the API server, as its own Deployment would run it:
#
# - its CRDs (applied over the corpus's, server-side, so the operator's own
#   version of a shared CRD wins), Namespace, ServiceAccount, Roles and
#   bindings as its install ships them, and a kubeconfig with a token of that
#   ServiceAccount, so it reads and writes with the RBAC it ships;
# - its own Configuration from its install, with leader election and
#   metrics off and its ports on loopback;
# - its webhook configurations and CRD conversion webhooks as shipped (rules,
#   selectors, failure policy), pointed at https://127.0.0.1:PORT, registered
#   before the manager starts (a certificate rotator injects its CA into
#   them and waits until it has);
# - a serving certificate valid for 127.0.0.1: from the cluster's CA, with the
#   manager's certificate rotation off; or, where operator.conf names the
#   Secret its rotator keeps (certificate_secret), in that Secret with a CA
#   of its own and the rotation on, since the manager needs it (Kueue reads
#   its metrics certificate from a fixed path otherwise).
#
# Order matters: JobSet and LeaderWorkerSet first, since Kueue's integrations
# for their kinds start only when their CRDs are served.
operator_names=(jobset lws kuberay kueue)
operators_dir=$root/build/operators

# write_token_kubeconfig FILE NAMESPACE SERVICE_ACCOUNT: a kubeconfig whose
# user is a token of that ServiceAccount.
write_token_kubeconfig() {
  local file=$1 token
  token=$(kubectl_admin create token "$3" -n "$2" --duration 48h)
  "$kube/kubectl" config --kubeconfig "$file" set-cluster e2e --server "$apiserver_url" \
    --certificate-authority "$dir/pki/ca.crt" --embed-certs >/dev/null
  "$kube/kubectl" config --kubeconfig "$file" set-credentials "$3" --token "$token" >/dev/null
  "$kube/kubectl" config --kubeconfig "$file" set-context e2e --cluster e2e --user "$3" >/dev/null
  "$kube/kubectl" config --kubeconfig "$file" use-context e2e >/dev/null
  chmod 600 "$file"
}

# The manager's arguments: the Deployment's own, less those this run sets
# (the configuration file, leader election, addresses), then operator.conf's.
operator_arguments() {
  local env_file=$1 arg
  while IFS= read -r line; do
    arg=${line#arg=}
    [ "$arg" != "$line" ] || continue
    case "$arg" in
      --config* | --leader-elect* | --enable-leader-election* | --metrics-* | --health-probe-*) ;;
      *) printf '%s\n' "$arg" ;;
    esac
  done <"$env_file"
}

operator_ready() { curl -sf "http://$1/readyz"; }

# make_rotator_certificates CERTS DNS CA_NAME: a CA and a serving certificate
# for DNS and 127.0.0.1 in CERTS, for the operator's rotator
# (open-policy-agent/cert-controller) to keep. As that rotator makes them
# itself: RSA keys in PKCS #1, a CA whose name is in its subjectAltName; ten
# years, since it replaces what expires within its lookahead (90 days), and
# its own would not name 127.0.0.1.
make_rotator_certificates() {
  local certs=$1 dns=$2 ca_name=$3
  pki_quiet openssl genrsa -traditional -out "$certs/ca.key" 2048
  pki_quiet openssl req -x509 -new -key "$certs/ca.key" -days 3650 -subj "/CN=$ca_name" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature,keyEncipherment" \
    -addext "subjectAltName=DNS:$ca_name" -out "$certs/ca.crt"
  pki_quiet openssl genrsa -traditional -out "$certs/tls.key" 2048
  pki_quiet openssl req -new -key "$certs/tls.key" -subj "/CN=$dns" -out "$certs/tls.csr"
  printf 'subjectAltName=DNS:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' "$dns" >"$certs/tls.ext"
  pki_quiet openssl x509 -req -in "$certs/tls.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" \
    -CAcreateserial -days 3650 -extfile "$certs/tls.ext" -out "$certs/tls.crt"
}

# make_rotator_secret CERTS NAMESPACE SECRET: the Secret the rotator reads
# them from.
make_rotator_secret() {
  local certs=$1
  kubectl_admin create secret generic "$3" -n "$2" --from-file "$certs/ca.crt" \
    --from-file "$certs/ca.key" --from-file "$certs/tls.crt" \
    --from-file "$certs/tls.key" >>"$dir/logs/$name-install.log" 2>&1
}

start_operator() {
  local name=$1 run=$dir/operators/$1 webhook_port probe_address config
  local namespace serviceAccount install flags=() args=() kubeconfig=$run/kubeconfig
  local certificate_secret="" certificate_dns="" certificate_ca_name="" ca=$dir/pki/ca.crt rotation=()
  mkdir -p "$run/certs"
  webhook_port=$(free_port)
  probe_address=127.0.0.1:$(free_port)
  config=$run/config.yaml
  # shellcheck disable=SC1090,SC1091
  source "$root/tests/e2e/operators/$name/operator.conf"
  if [ -n "$certificate_secret" ]; then
    ca=$run/certs/ca.crt
    rotation=(-keep-cert-rotation)
    make_rotator_certificates "$run/certs" "$certificate_dns" "$certificate_ca_name"
  else
    pki_new_serving_cert "$run/certs/tls.key" "$run/certs/tls.crt" "$dir/pki/ca.crt" \
      "$dir/pki/ca.key" 30 "$name-webhook" "IP:127.0.0.1,DNS:localhost"
  fi
  "$operators_dir/render" -out "$run" -webhook-url "https://127.0.0.1:$webhook_port" \
    -ca-bundle "$ca" -webhook-port "$webhook_port" -cert-dir "$run/certs" \
    -probe-address "$probe_address" "${rotation[@]}" <"$operators_dir/$name/install.yaml" ||
    fail "the install of $name could not be rendered"
  # shellcheck disable=SC1091
  source <(grep -E '^(namespace|serviceAccount)=' "$run/operator.env")
  mapfile -t args < <(operator_arguments "$run/operator.env")

  kubectl_admin apply --server-side --force-conflicts --field-manager "$name-install" \
    -f "$run/crds.yaml" >>"$dir/logs/$name-install.log" 2>&1 ||
    { show_log "$name-install"; fail "the CRDs of $name could not be applied"; }
  wait_until kube-apiserver 60 "the CRDs of $name to be Established" crds_established
  kubectl_admin apply --server-side --force-conflicts --field-manager "$name-install" \
    -f "$run/rbac.yaml" >>"$dir/logs/$name-install.log" 2>&1 ||
    { show_log "$name-install"; fail "the RBAC of $name could not be applied"; }
  write_token_kubeconfig "$kubeconfig" "$namespace" "$serviceAccount"
  if [ -n "$certificate_secret" ]; then
    make_rotator_secret "$run/certs" "$namespace" "$certificate_secret" ||
      { show_log "$name-install"; fail "the certificate Secret of $name could not be made"; }
  fi
  if [ -s "$run/webhooks.yaml" ]; then
    kubectl_admin apply --server-side --force-conflicts --field-manager "$name-install" \
      -f "$run/webhooks.yaml" >>"$dir/logs/$name-install.log" 2>&1 ||
      { show_log "$name-install"; fail "the webhooks of $name could not be registered"; }
  fi

  start_process "$name" "$operators_dir/$name/manager" "${args[@]}" "${flags[@]}"
  wait_until "$name" 180 "$name /readyz" operator_ready "$probe_address"
  echo "$name $(cat "$operators_dir/$name/version")" >>"$dir/operators/versions"
}

start_operators() {
  local name
  scripts/build-operators "$operators_dir" >>"$dir/logs/build-operators.log" 2>&1 ||
    { show_log build-operators; fail "scripts/build-operators failed"; }
  mkdir -p "$dir/operators"
  : >"$dir/operators/versions"
  for name in "${operator_names[@]}"; do
    step "operator $name"
    start_operator "$name"
  done
}
