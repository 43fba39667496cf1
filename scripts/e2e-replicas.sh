# shellcheck shell=bash
# aiadmit's replicas behind its Service, as processes beside the end-to-end
# API server; sourced by scripts/e2e-cluster (`scripts/e2e-cluster replica
# DIR ...`). The fault tests (tests/e2e/faults_e2e_test.cpp) make the Pods,
# Node, Service and webhook registration that route the API server to them;
# this part runs the processes and keeps their certificates.
#
# Endpoint addresses may not be loopback ones, so each replica listens on the
# machine's first global IPv4 address (as a hostNetwork Pod does: its podIP
# is its node's), each on a port of its own, which its Pod names `https` so
# the Service's named targetPort finds it. The serving certificate is the
# Service's (aiadmit.aiadmit-system.svc), from certs/webhook-certs.sh in
# DIR/replicas/pki, as docs/install.md makes it without cert-manager. Each
# replica reads its pair from a directory of its own, which `rotate-ca`
# updates as the kubelet updates a mounted Secret: replaced whole.
#
# The flags are the shipped Deployment's (manifests/base/deployment.yaml)
# but for the paths and the address.

replica_root() { echo "$dir/replicas"; }

# The first global IPv4 address of the machine: an EndpointSlice refuses
# 127.0.0.0/8.
replica_host() {
  local address
  address=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4; exit}' | cut -d/ -f1)
  [ -n "$address" ] ||
    fail "no global IPv4 address on this machine: Service endpoints may not be loopback addresses"
  echo "$address"
}

# A port of $1 nothing listens on (free_port checks loopback only).
replica_free_port() {
  local host=$1 port tries=0
  while [ "$tries" -lt 200 ]; do
    port=$((20000 + RANDOM % 12000))
    tries=$((tries + 1))
    grep -qx "$port" "$dir/run/ports" 2>/dev/null && continue
    if ! (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null &&
      ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port" >>"$dir/run/ports"
      echo "$port"
      return 0
    fi
  done
  fail "no free port found on $host"
}

replica_certs() {
  certs/webhook-certs.sh "$@" --secret "$(replica_root)/tls-secret.yaml" \
    --apiserver-config-dir "$(replica_root)/pki" --days 30 --ca-days 60 "$(replica_root)/pki" \
    >>"$dir/logs/replica-certs.log" 2>&1 ||
    { tail -n 5 "$dir/logs/replica-certs.log" >&2; fail "certs/webhook-certs.sh $* failed"; }
}

# The shipped Deployment's serve flags that say how it runs, not where its
# files are (--shutdown-delay, --io-threads).
replica_shipped_flags() {
  sed -n '/^ *args:/,/^ *ports:/p' manifests/base/deployment.yaml |
    grep -oE -- '--(shutdown-delay|io-threads)=[^ ]+'
}

# The pair NAME serves, written as the kubelet writes a Secret volume: a new
# directory of both files, then the ..data symlink swapped to it at once, so
# that the replica never reads a key and a certificate of different pairs.
replica_install_pair() {
  local tls version
  tls=$(replica_root)/$1/tls
  version=..$(date +%s%N)
  mkdir -p "$tls/$version"
  cp "$(replica_root)/pki/tls.crt" "$(replica_root)/pki/tls.key" "$tls/$version/"
  ln -sfn "$version" "$tls/..data_tmp"
  mv -T "$tls/..data_tmp" "$tls/..data"
  [ -L "$tls/tls.crt" ] || ln -s ..data/tls.crt "$tls/tls.crt"
  [ -L "$tls/tls.key" ] || ln -s ..data/tls.key "$tls/tls.key"
  find "$tls" -mindepth 1 -maxdepth 1 -type d -name '..*' ! -name "$version" -exec rm -rf {} +
}

replica_ready() { curl -sfk "https://$1/readyz"; }

# start NAME [PORT]: prints HOST:PORT once /readyz answers.
replica_start() {
  local name=$1 port=${2:-} host flags
  host=$(replica_host)
  [ -n "$port" ] || port=$(replica_free_port "$host")
  [ -f "$(replica_root)/pki/tls.crt" ] || replica_certs
  replica_install_pair "$name"
  mapfile -t flags < <(replica_shipped_flags)
  start_process "replica-$name" "$aiadmit_binary" serve --profiles "$root/profiles" \
    --tls-cert "$(replica_root)/$name/tls/tls.crt" --tls-key "$(replica_root)/$name/tls/tls.key" \
    --listen "$host:$port" --cluster-view=on --kubeconfig "$dir/aiadmit/kubeconfig" "${flags[@]}"
  wait_until "replica-$name" 30 "replica $name's /readyz" replica_ready "$host:$port"
  echo "$host:$port" >"$(replica_root)/$name/address"
  echo "$host:$port"
}

# The grace period of the shipped Pod: SIGTERM, then SIGKILL at its end.
replica_grace_seconds() {
  grep -oE 'terminationGracePeriodSeconds: [0-9]+' manifests/base/deployment.yaml | grep -oE '[0-9]+'
}

replica_stop() {
  local name=$1 pid waited=0 grace
  grace=$(replica_grace_seconds)
  pid=$(running_pid "replica-$name") || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((grace * 10)) ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/run/replica-$name.pid"
}

replica_kill() {
  local pid
  pid=$(running_pid "replica-$1") || fail "replica $1 does not run"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$dir/run/replica-$1.pid"
}

replica_names() {
  local file
  for file in "$dir"/run/replica-*.pid; do
    [ -e "$file" ] || continue
    file=${file##*/replica-}
    echo "${file%.pid}"
  done
}

replica_reloads() { grep -c 'certificate reloaded' "$dir/logs/replica-$1.log" || true; }
replica_reloaded_since() { [ "$(replica_reloads "$1")" -gt "$2" ]; }

# Every running replica's pair replaced by the PKI's, as the kubelet
# updates a mounted Secret; returns once each has reloaded it.
replica_reload() {
  local name entry before=()
  for name in $(replica_names); do
    before+=("$name=$(replica_reloads "$name")")
    replica_install_pair "$name"
  done
  for entry in "${before[@]}"; do
    name=${entry%%=*}
    wait_until "replica-$name" 30 "replica $name to reload its certificate" \
      replica_reloaded_since "$name" "${entry#*=}"
  done
}

replica_down() {
  local name
  for name in $(replica_names); do replica_stop "$name"; done
  rm -rf "$(replica_root)"
}

replica_command() {
  [ -f "$dir/cluster.env" ] || fail "no cluster is up in $dir"
  case "${1:-}" in
    host) replica_host ;;
    start) [ "$#" -ge 2 ] || usage; replica_start "$2" "${3:-}" ;;
    stop) [ "$#" -eq 2 ] || usage; replica_stop "$2" ;;
    kill) [ "$#" -eq 2 ] || usage; replica_kill "$2" ;;
    ca-bundle) [ -f "$(replica_root)/pki/ca.crt" ] || replica_certs; cat "$(replica_root)/pki/ca-bundle.crt" ;;
    certs) shift; replica_certs "$@" ;;
    reload) replica_reload ;;
    down) replica_down ;;
    *) usage ;;
  esac
}
