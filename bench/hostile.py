#!/usr/bin/env python3
"""Hostile and idle clients for bench/run-http.sh, on loopback only, each run
bounded in connections and time.

  hostile.py PORT CA idle N SECONDS            N idle keep-alive TLS connections
  hostile.py PORT CA slow N M SECONDS          N clients trickling headers, M stalled handshakes
  hostile.py PORT CA headers BYTES             one client sending BYTES of small headers
  hostile.py PORT CA line BYTES                one request line of BYTES, no newline
  hostile.py PORT CA big N FILE                N concurrent POSTs of FILE to /mutate

Connection scenarios print READY once every connection is in place, hold them
for SECONDS and exit. The others print what the server answered.
"""
import socket
import ssl
import sys
import threading
import time

HOST = "127.0.0.1"
MAX_CONNECTIONS = 5000
MAX_SECONDS = 120
MAX_BYTES = 512 * 1024 * 1024


def tls_context(ca):
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = False
    return context


def tls_connect(port, context):
    raw = socket.create_connection((HOST, port), timeout=10)
    return context.wrap_socket(raw, server_hostname="localhost")


def status_of(sock, seconds=10):
    sock.settimeout(seconds)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    return line or "(connection closed without an answer)"


def hold(seconds):
    print("READY", flush=True)
    time.sleep(min(seconds, MAX_SECONDS))


def idle(port, ca, count, seconds):
    context = tls_context(ca)
    held = []
    for _ in range(min(count, MAX_CONNECTIONS)):
        sock = tls_connect(port, context)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        status_of(sock)
        held.append(sock)
    hold(seconds)


def slow(port, ca, trickling, stalled, seconds):
    context = tls_context(ca)
    held = []
    for _ in range(min(stalled, MAX_CONNECTIONS)):
        raw = socket.create_connection((HOST, port), timeout=10)
        raw.sendall(b"\x16\x03\x01")  # the start of a ClientHello, and no more
        held.append(raw)
    slow_ones = []
    for _ in range(min(trickling, MAX_CONNECTIONS)):
        sock = tls_connect(port, context)
        sock.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\n")
        slow_ones.append(sock)
    print("READY", flush=True)
    end = time.monotonic() + min(seconds, MAX_SECONDS)
    while time.monotonic() < end:
        for sock in slow_ones:
            try:
                sock.sendall(b"X")  # one more byte of a header that never ends
            except (OSError, ssl.SSLError):
                pass
        time.sleep(1)


def flood(port, ca, start, chunk, total, what):
    """Sends `start`, then `chunk` until `total` bytes or the server stops taking them."""
    sock = tls_connect(port, tls_context(ca))
    sock.sendall(start)
    sent = 0
    try:
        while sent < min(total, MAX_BYTES):
            sock.sendall(chunk)
            sent += len(chunk)
    except (OSError, ssl.SSLError):
        pass
    print(f"sent {sent} bytes of {what}; answer: {status_of(sock)}")


def big(port, ca, count, path):
    with open(path, "rb") as review:
        body = review.read()
    context = tls_context(ca)
    request = (b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    statuses = []
    start = threading.Barrier(min(count, 64))

    def one():
        sock = tls_connect(port, context)
        start.wait()
        sock.sendall(request)
        statuses.append(status_of(sock, 60))

    threads = [threading.Thread(target=one) for _ in range(min(count, 64))]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    summary = {}
    for status in statuses:
        summary[status] = summary.get(status, 0) + 1
    print(f"{len(statuses)} reviews of {len(body)} bytes in {time.monotonic() - began:.2f} s: {summary}")


def main():
    port, ca, scenario, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    if scenario == "idle":
        idle(port, ca, int(args[0]), float(args[1]))
    elif scenario == "slow":
        slow(port, ca, int(args[0]), int(args[1]), float(args[2]))
    elif scenario == "headers":
        flood(port, ca, b"POST /mutate HTTP/1.1\r\nHost: x\r\n", b"X-A: b\r\n" * 1024,
              int(args[0]), "headers")
    elif scenario == "line":
        flood(port, ca, b"POST /mutate?", b"a" * 65536, int(args[0]), "request line")
    elif scenario == "big":
        big(port, ca, int(args[0]), args[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
