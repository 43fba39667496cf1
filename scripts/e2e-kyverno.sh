# shellcheck shell=bash
# Kyverno's admission controller beside the end-to-end API server, for the
# comparison in bench/e2e-latency.sh --kyverno; sourced by scripts/e2e-cluster
# (`scripts/e2e-cluster kyverno DIR start|stop`).
#
# Built from its Go module (bench/operators/kyverno, by scripts/build-operators
# into build/bench-operators) and run out of cluster the way its development
# guide runs it: --kubeconfig and --serverIP, with which it registers its
# webhooks at https://SERVER_IP/... and puts that IP in the certificate it
# makes. Otherwise as its install (config/install-latest-testing.yaml, its
# Helm chart's output) runs it:
#
# - its CRDs from the module's config/crds; its Namespace, ServiceAccounts,
#   RBAC and ConfigMaps from the install, and a kubeconfig with a token of
#   the admission controller's ServiceAccount, so it acts with the RBAC it
#   ships;
# - the admission controller Deployment's arguments and environment, but
#   for its addresses (webhooks and metrics on loopback ports, the
#   controller-runtime metrics off) and admission reports, which are off:
#   without them on, a mutation writes nothing back to the API server, as
#   aiadmit writes nothing (with them, Kyverno creates an EphemeralReport per
#   mutated Pod, for a reports controller that does not run here); and the
#   generation of native MutatingAdmissionPolicies, which is on, for the
#   MutatingPolicies that ask for it (spec.autogen), as its Helm chart's
#   value does;
# - its own CA and serving certificate, which it makes and keeps in Secrets
#   of its namespace, and its own webhook configurations, which it registers
#   and updates from its policies (leader election on, one replica);
# - its webhooks scoped, through its ConfigMap's `webhooks` setting, to
#   namespaces labelled kyverno.aiadmit.dev/enabled=true (aiadmit's are
#   scoped to aiadmit.dev/enabled=true).
#
# `stop` stops it and deletes the webhook configurations and native admission
# policies it registered (as it does itself when its Deployment scales to
# zero) and its health Lease.
# DIR/kyverno/kyverno.env names its port, CA, metrics URL and namespace label.

kyverno_label=kyverno.aiadmit.dev/enabled
kyverno_deployment=kyverno-admission-controller

kyverno_ready() {
  curl -sf --cacert "$dir/kyverno/ca.crt" "https://127.0.0.1:$1/health/readiness"
}

# The CA Kyverno made for itself, once it has made it.
kyverno_ca() {
  local ca
  ca=$(kubectl_admin get secret -n "$1" kyverno-svc.kyverno.svc.kyverno-tls-ca \
    -o jsonpath='{.data.tls\.crt}') && [ -n "$ca" ] && base64 -d <<<"$ca" >"$dir/kyverno/ca.crt"
}

# The Deployment's arguments, less those this run sets.
kyverno_arguments() {
  local line arg
  while IFS= read -r line; do
    arg=${line#arg=}
    [ "$arg" != "$line" ] || continue
    case "$arg" in
      --serverIP=* | --webhookServer* | --metrics* | --controllerRuntimeMetricsAddress=* | --admissionReports=* | \
        --generateMutatingAdmissionPolicy=*) ;;
      *) printf '%s\n' "$arg" ;;
    esac
  done <"$dir/kyverno/operator.env"
}

start_kyverno() {
  local run=$dir/kyverno built=$root/build/bench-operators port metrics_port namespace serviceAccount
  local args=() environment=() selector
  scripts/build-operators "$built" bench/operators >>"$dir/logs/build-operators.log" 2>&1 ||
    { show_log build-operators; fail "scripts/build-operators build/bench-operators bench/operators failed"; }
  rm -rf "$run"
  mkdir -p "$run/sigstore"
  "$built/render" -out "$run" -deployment "$kyverno_deployment" <"$built/kyverno/install.yaml" ||
    fail "the install of Kyverno could not be rendered"
  # shellcheck disable=SC1091
  source <(grep -E '^(namespace|serviceAccount)=' "$run/operator.env")
  mapfile -t args < <(kyverno_arguments)
  mapfile -t environment < <(sed -n 's/^env=//p' "$run/operator.env" | grep -v '^TUF_ROOT=')

  local file
  for file in "$built/kyverno/crds.yaml" "$run/rbac.yaml" "$run/configmaps.yaml"; do
    kubectl_admin apply --server-side --force-conflicts --field-manager kyverno-install \
      -f "$file" >>"$dir/logs/kyverno-install.log" 2>&1 ||
      { show_log kyverno-install; fail "$file could not be applied"; }
  done
  wait_until kube-apiserver 60 "the CRDs of Kyverno to be Established" crds_established
  # The setting is a JSON document in a string.
  selector=$(printf '{\\"namespaceSelector\\":{\\"matchLabels\\":{\\"%s\\":\\"true\\"}}}' "$kyverno_label")
  kubectl_admin patch configmap kyverno -n "$namespace" --type merge \
    -p "{\"data\":{\"webhooks\":\"$selector\"}}" \
    >>"$dir/logs/kyverno-install.log" 2>&1 ||
    { show_log kyverno-install; fail "Kyverno's webhooks could not be scoped"; }
  write_token_kubeconfig "$run/kubeconfig" "$namespace" "$serviceAccount"

  port=$(free_port)
  metrics_port=$(free_port)
  start_process kyverno env "${environment[@]}" TUF_ROOT="$run/sigstore" \
    KYVERNO_POD_NAME="$kyverno_deployment-e2e" \
    "$built/kyverno/manager" "${args[@]}" --kubeconfig="$run/kubeconfig" \
    --serverIP="127.0.0.1:$port" --webhookServerHost=127.0.0.1 --webhookServerPort="$port" \
    --metricsHost=127.0.0.1 --metricsPort="$metrics_port" --controllerRuntimeMetricsAddress=0 \
    --disableLogColor \
    --admissionReports=false --generateMutatingAdmissionPolicy=true
  wait_until kyverno 120 "Kyverno's CA" kyverno_ca "$namespace"
  wait_until kyverno 120 "Kyverno /health/readiness" kyverno_ready "$port"
  cat >"$run/kyverno.env" <<EOF
AIADMIT_E2E_KYVERNO_PORT=$port
AIADMIT_E2E_KYVERNO_CA=$run/ca.crt
AIADMIT_E2E_KYVERNO_METRICS=http://127.0.0.1:$metrics_port/metrics
AIADMIT_E2E_KYVERNO_LABEL=$kyverno_label
AIADMIT_E2E_KYVERNO_VERSION='$(cat "$built/kyverno/version")'
EOF
}

stop_kyverno() {
  stop_processes kyverno
  kubectl_admin delete mutatingwebhookconfigurations,validatingwebhookconfigurations \
    -l webhook.kyverno.io/managed-by --ignore-not-found >/dev/null
  kubectl_admin delete mutatingadmissionpolicies,mutatingadmissionpolicybindings \
    -l app.kubernetes.io/managed-by=kyverno --ignore-not-found >/dev/null
  kubectl_admin delete lease -n kyverno kyverno-health --ignore-not-found >/dev/null 2>&1 || true
  rm -f "$dir/kyverno/kyverno.env"
}
