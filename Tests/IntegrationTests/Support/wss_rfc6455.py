"""A TLS page's socket spoken to frame by frame, as WebSocketOnBridgeLoopTests speaks to a plain one: the
answers of the one WebSocket reader on the TLS path. Prints one line per answer; the test checks them.

usage: wss_rfc6455.py PORT SECRET MOVE   (MOVE: a touch packet's JSON text, one finger down)
"""
import os
import socket
import ssl
import struct
import sys

PORT, SECRET, MOVE = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
CONTEXT = ssl.create_default_context()
CONTEXT.check_hostname = False
CONTEXT.verify_mode = ssl.CERT_NONE


def connect():
    raw = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    tls = CONTEXT.wrap_socket(raw, server_hostname="127.0.0.1")
    tls.sendall((f"GET /ws?k={SECRET} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nConnection: Upgrade\r\n"
                 "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        more = tls.recv(4096)
        if not more:
            raise SystemExit("no answer to the upgrade")
        head += more
    status = head.split(b" ")[1]
    if status != b"101":
        raise SystemExit(f"upgrade answered {status.decode()}")
    return tls, head.split(b"\r\n\r\n", 1)[1]


def frame(payload, opcode=0x1, fin=True, rsv1=False):
    """A client's frame, masked."""
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    key = os.urandom(4)
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", first, 0x80 | n)
    elif n < 65536:
        header = struct.pack("!BBH", first, 0x80 | 126, n)
    else:
        header = struct.pack("!BBQ", first, 0x80 | 127, n)
    return header + key + bytes(b ^ key[i & 3] for i, b in enumerate(payload))


class Reader:
    def __init__(self, tls, pending):
        self.tls, self.pending = tls, pending

    def next(self):
        """The server's next frame (opcode, payload); None when the socket ends."""
        while True:
            p = self.pending
            if len(p) >= 2:
                size, offset = p[1] & 0x7F, 2
                if size == 126 and len(p) >= 4:
                    size, offset = struct.unpack("!H", p[2:4])[0], 4
                if (p[1] & 0x7F) < 126 or len(p) >= 4:
                    if len(p) >= offset + size:
                        self.pending = p[offset + size:]
                        return p[0] & 0x0F, p[offset:offset + size]
            try:
                more = self.tls.recv(65536)
            except (ConnectionResetError, ssl.SSLError, socket.timeout):
                more = b""
            if not more:
                return None
            self.pending += more

    def until(self, opcode):
        """Frames up to the first of `opcode` (the greeting and replies may come first); None: ended."""
        while True:
            got = self.next()
            if got is None or got[0] == opcode:
                return got


def show(what, got):
    print(what, "none" if got is None else f"{got[0]} {got[1].hex()}", flush=True)


# A ping gets its pong; the page's close its close, the code echoed; then the end.
tls, rest = connect()
r = Reader(tls, rest)
tls.sendall(frame(b"abc", opcode=0x9))
show("pong", r.until(0xA))
tls.sendall(frame(b"\x0f\xa0", opcode=0x8))
show("close", r.until(0x8))
show("after-close", r.next())
tls.close()

# A fragmented message is dropped (counted); a move is applied; a frame with a reserved bit ends the socket.
tls, rest = connect()
r = Reader(tls, rest)
tls.sendall(frame(b"text a", fin=False) + frame(b"b", opcode=0x0))
tls.sendall(frame(MOVE))
tls.sendall(frame(MOVE, rsv1=True))
show("refused", r.until(0x8))
tls.close()

# A frame announced larger than 64 KiB: close 1009 before its payload.
tls, rest = connect()
r = Reader(tls, rest)
tls.sendall(bytes([0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70, 1, 2, 3, 4]))
show("too-big", r.until(0x8))
tls.close()
print("done", flush=True)
