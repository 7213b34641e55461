#!/usr/bin/env python3
"""TLS handshakes in a loop against a local HTTPS server, from several threads at once.

    tls_flood.py PORT SECONDS CLIENTS HOLD

Each client connects to 127.0.0.1:PORT, completes a TLS handshake (no certificate check: the test's
own self-signed certificate), sends most of a request head (never its end) and keeps the connection;
once it holds HOLD connections it drops the oldest without a TLS close_notify (a ragged close). Again and
again until SECONDS have passed; then it drops them all. So the server sees both ways a flood ends a
connection: the peer going away mid-head, and the server evicting the oldest connection of an address
that is over its limit. Prints one line: "handshakes N failures M". Loopback only, bounded in time.
"""
import collections
import socket
import ssl
import sys
import threading
import time

HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 15000


def client(port, deadline, hold, counts, lock):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    held = collections.deque()
    done = failed = 0
    while time.monotonic() < deadline:
        raw = None
        try:
            raw = socket.create_connection(("127.0.0.1", port), timeout=5)
            tls = context.wrap_socket(raw, server_hostname="localhost")
            tls.sendall(HEAD)
            held.append(tls)
            done += 1
        except (OSError, ssl.SSLError):
            if raw is not None:
                raw.close()
            failed += 1
            time.sleep(0.001)
        while len(held) > hold:
            held.popleft().close()
    while held:
        held.popleft().close()
    with lock:
        counts[0] += done
        counts[1] += failed


def main():
    port, seconds, clients, hold = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    deadline = time.monotonic() + seconds
    counts, lock = [0, 0], threading.Lock()
    threads = [threading.Thread(target=client, args=(port, deadline, hold, counts, lock)) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"handshakes {counts[0]} failures {counts[1]}", flush=True)


if __name__ == "__main__":
    main()
