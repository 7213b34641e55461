#!/usr/bin/env python3
"""Hostile bytes at a local HTTPS server's TLS, from a seeded random sequence, then one good request.

    tls_hostile.py PORT SEED ROUNDS

Each round opens a connection and sends one of: random bytes (1 to 20,000); a real ClientHello cut at a
random point; a real ClientHello followed by random bytes; a whole handshake (Python's ssl over memory
BIOs) and then random bytes where the records should be; or an old version (TLS 1.0 and 1.1 only). It
reads what the server says until the server closes (at most 5 s). Then it makes one proper HTTPS request
(GET /healthz) and prints "rounds N answered STATUS-LINE"; exit status 1 when the request fails. Each
round's kind and size come from SEED, so a failing sequence can be run again. Loopback only, bounded.
"""
import random
import socket
import ssl
import sys
import warnings

# TLS 1.0 and 1.1 are deprecated in Python too: asking for them on purpose is the point.
warnings.filterwarnings("ignore", category=DeprecationWarning)


def client_context(old=False):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    if old:
        c.minimum_version = ssl.TLSVersion.TLSv1
        c.maximum_version = ssl.TLSVersion.TLSv1_1
        c.set_ciphers("ALL:@SECLEVEL=0")
    return c


def client_hello():
    """A real ClientHello, as Python's ssl writes it first."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = client_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def drain(sock):
    """Reads until the server closes (or 5 s): the server must close, not wait."""
    sock.settimeout(5)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, OSError):
        pass


def handshake_then_garbage(port, rng):
    """A whole handshake over memory BIOs on a raw socket, then random bytes as records."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = client_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                sock.sendall(outgoing.read())
                data = sock.recv(65536)
                if not data:
                    return
                incoming.write(data)
        sock.sendall(outgoing.read())
        sock.sendall(rng.randbytes(rng.randint(1, 20000)))
        drain(sock)
    except (OSError, ssl.SSLError):
        pass
    finally:
        sock.close()


def main():
    port, seed, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    hello = client_hello()
    for _ in range(rounds):
        kind = rng.randrange(5)
        if kind == 3:
            handshake_then_garbage(port, rng)
            continue
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            continue
        try:
            if kind == 0:
                sock.sendall(rng.randbytes(rng.randint(1, 20000)))
            elif kind == 1:
                sock.sendall(hello[:rng.randint(1, len(hello) - 1)])
                sock.shutdown(socket.SHUT_WR)
            elif kind == 2:
                sock.sendall(hello + rng.randbytes(rng.randint(1, 5000)))
            else:
                try:
                    client_context(old=True).wrap_socket(sock, server_hostname="localhost").close()
                except (OSError, ssl.SSLError):
                    pass
                continue
            drain(sock)
        except OSError:
            pass
        finally:
            sock.close()
    with client_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                      server_hostname="localhost") as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        line = s.recv(4096).decode(errors="replace").splitlines()[0]
    print(f"rounds {rounds} answered {line}", flush=True)
    sys.exit(0 if " 200 " in line + " " else 1)


main()
