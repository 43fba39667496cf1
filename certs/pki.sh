# shellcheck shell=bash
# OpenSSL steps shared by the certificate scripts in this folder; sourced, not
# run. Needs OpenSSL 1.1.1 or newer. Keys are ECDSA P-256: small, fast to
# verify, and accepted by kube-apiserver.

# pki_quiet COMMAND...: runs COMMAND, showing what it printed only if it fails.
pki_quiet() {
  local log status=0
  log=$(mktemp)
  "$@" >"$log" 2>&1 || status=$?
  [ "$status" -eq 0 ] || cat "$log" >&2
  rm -f "$log"
  return "$status"
}

# pki_new_ca KEY_OUT CERT_OUT DAYS COMMON_NAME
pki_new_ca() {
  pki_quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1" -out "$2" -days "$3" -subj "/CN=$4" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign"
}

# pki_new_leaf_cert KEY_OUT CERT_OUT CA_CERT CA_KEY DAYS SUBJECT USAGE [SUBJECT_ALT_NAMES]
# A certificate the CA signs for one end of a TLS connection: SUBJECT in
# OpenSSL's form ("/O=group/CN=name"), USAGE serverAuth or clientAuth.
pki_new_leaf_cert() {
  local work status=0
  work=$(mktemp -d)
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$7"
    echo "subjectKeyIdentifier=hash"
    echo "authorityKeyIdentifier=keyid,issuer"
    [ -z "${8:-}" ] || echo "subjectAltName=$8"
  } >"$work/leaf.ext"
  # A random serial keeps no serial file beside the CA.
  pki_quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1" -out "$work/leaf.csr" -subj "$6" &&
    pki_quiet openssl x509 -req -in "$work/leaf.csr" -CA "$3" -CAkey "$4" \
      -set_serial "0x$(openssl rand -hex 16)" -out "$2" -days "$5" \
      -extfile "$work/leaf.ext" || status=$?
  rm -rf "$work"
  return "$status"
}

# pki_new_serving_cert KEY_OUT CERT_OUT CA_CERT CA_KEY DAYS COMMON_NAME SUBJECT_ALT_NAMES
# SUBJECT_ALT_NAMES is OpenSSL syntax, e.g. "DNS:a.b.svc,IP:127.0.0.1".
pki_new_serving_cert() {
  pki_new_leaf_cert "$1" "$2" "$3" "$4" "$5" "/CN=$6" serverAuth "$7"
}

# pki_new_client_cert KEY_OUT CERT_OUT CA_CERT CA_KEY DAYS COMMON_NAME [ORGANIZATION]
# A client certificate as kube-apiserver reads one: the common name is the
# user, the organization a group (system:masters for a cluster admin).
pki_new_client_cert() {
  local subject="/CN=$6"
  [ -z "${7:-}" ] || subject="/O=$7$subject"
  pki_new_leaf_cert "$1" "$2" "$3" "$4" "$5" "$subject" clientAuth
}

# pki_end_date CERT: the certificate's notAfter, as OpenSSL prints it.
pki_end_date() {
  openssl x509 -in "$1" -noout -enddate | cut -d= -f2
}

# pki_expires_within CERT SECONDS: true when CERT ends within SECONDS from now.
pki_expires_within() {
  ! openssl x509 -in "$1" -noout -checkend "$2" >/dev/null
}
