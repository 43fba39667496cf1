# OpenSSL steps shared by the certificate scripts in this folder; sourced, not run.
# Keys are ECDSA P-256: small, fast to verify, and accepted by kube-apiserver.

# pki_new_ca KEY_OUT CERT_OUT DAYS COMMON_NAME
pki_new_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1" -out "$2" -days "$3" -subj "/CN=$4" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# pki_new_serving_cert KEY_OUT CERT_OUT CA_CERT CA_KEY DAYS COMMON_NAME SUBJECT_ALT_NAMES
# SUBJECT_ALT_NAMES is OpenSSL syntax, e.g. "DNS:a.b.svc,IP:127.0.0.1".
pki_new_serving_cert() {
  local work
  work=$(mktemp -d)
  cat >"$work/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid,issuer
subjectAltName=$7
EXT
  # A random serial keeps no serial file beside the CA.
  if openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1" -out "$work/server.csr" -subj "/CN=$6" 2>/dev/null &&
    openssl x509 -req -in "$work/server.csr" -CA "$3" -CAkey "$4" \
      -set_serial "0x$(openssl rand -hex 16)" -out "$2" -days "$5" \
      -extfile "$work/server.ext" 2>/dev/null; then
    rm -rf "$work"
    return 0
  fi
  rm -rf "$work"
  return 1
}

# pki_not_after CERT: the certificate's notAfter as seconds since the epoch.
pki_not_after() {
  date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s
}
