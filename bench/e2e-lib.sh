# shellcheck shell=bash
# Shared by the benchmarks that run on the end-to-end control plane
# (bench/e2e-scheduling.sh, bench/e2e-latency.sh); sourced, not run.
#
# bench_e2e_up: sets E2E_DIR, KUBECTL and KUBECONFIG for a running cluster of
# scripts/e2e-cluster with the suite's small GPU cluster of Nodes. With
# AIADMIT_E2E_DIR naming a running cluster it uses that one; else it builds
# what is missing, starts one in build/bench-e2e and stops it on exit.

bench_e2e_up() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build" --target aiadmit e2e_tests -j2 >/dev/null
  if [ -n "${AIADMIT_E2E_DIR:-}" ] && [ -f "$AIADMIT_E2E_DIR/cluster.env" ]; then
    E2E_DIR=$(cd "$AIADMIT_E2E_DIR" && pwd)
  else
    E2E_DIR=$root/build/bench-e2e
    "$root/scripts/e2e-cluster" up "$E2E_DIR" --operators >&2
    # shellcheck disable=SC2064
    trap "'$root/scripts/e2e-cluster' down '$E2E_DIR' >/dev/null" EXIT
  fi
  export AIADMIT_E2E_DIR=$E2E_DIR
  # shellcheck disable=SC1091
  source "$E2E_DIR/cluster.env"
  KUBECTL=$AIADMIT_E2E_KUBECTL
  export KUBECONFIG=$AIADMIT_E2E_KUBECONFIG
  # The Nodes the end-to-end tests run on, made by the test that makes them.
  "$root/build/tests/e2e/e2e_tests" --gtest_filter='E2eSetup.*' >/dev/null ||
    { echo "bench: could not create the suite's Nodes" >&2; return 1; }
}

# bench_namespace NAME OPTED_IN [LABEL]: a new namespace, labelled
# aiadmit.dev/enabled=true when OPTED_IN is "true" and with LABEL (KEY=VALUE)
# when given, with its ServiceAccount. Give each run names of its own: for a
# while after a namespace is deleted the API server looks its name up in
# storage on every create in it.
bench_namespace() {
  "$KUBECTL" create namespace "$1" >/dev/null
  [ "$2" != true ] || "$KUBECTL" label namespace "$1" aiadmit.dev/enabled=true >/dev/null
  [ -z "${3:-}" ] || "$KUBECTL" label namespace "$1" "$3" >/dev/null
  bench_wait 60 "the ServiceAccount of $1" "$KUBECTL" get serviceaccount default -n "$1"
}

# bench_delete_namespace NAME: deletes it and, without a kubelet to confirm,
# the Pods bound to a node with no grace period (the namespace controller
# removes the others itself).
bench_delete_namespace() {
  local bound
  "$KUBECTL" delete namespace "$1" --ignore-not-found --wait=false >/dev/null
  bound=$("$KUBECTL" get pods -n "$1" -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{" "}{end}' 2>/dev/null || true)
  # shellcheck disable=SC2086
  [ -z "$bound" ] || "$KUBECTL" delete pods -n "$1" $bound --grace-period=0 --force >/dev/null 2>&1 || true
}

# bench_wait SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
bench_wait() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "bench: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.5
  done
}
