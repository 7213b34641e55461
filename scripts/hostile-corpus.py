#!/usr/bin/env python3
"""Writes the hostile corpora: Tests/Corpus/poseai-hostile/ and tuio-hostile/ (*.bin and a MANIFEST each).

Each datagram is a file; MANIFEST says what the daemon must do with it, one line per file:
    <file> reject <reason>            the decoder drops it for PoseAIDecodeError.Reason <reason>
    <file> apply <events>             it decodes, with <events> Touches events, and is applied
Files are replayed in name order (unit test: decoder + core; integration test: as datagrams to the
real daemon). Replayed in that order from an idle core, no button is held after the last file.
Regenerate with `scripts/hostile-corpus.py` after editing; the output is deterministic.
TUIO (OSC over UDP) MANIFEST lines, replayed through one decoder kept across files as the listener keeps
it per source:
    <file> reject <reason>            the decoder drops it for OSCDropReason <reason>; nothing of it applies
    <file> apply <frames>             it decodes and <frames> frames (fseq) are applied
    <file> late <frames>              it decodes and <frames> frames are dropped as late, none applied
Replayed in order, the TUIO corpus also ends with no touch live and nothing held.
To add a listener, add a sibling directory with its own MANIFEST.
"""
import os

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Corpus")
ROOT = os.path.join(CORPUS, "poseai-hostile")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
FREE = "====" * 10
MAX_UDP = 65_507  # largest UDP/IPv4 payload

cases = []  # (name, bytes, outcome)

def add(name, data, outcome):
    if isinstance(data, str):
        data = data.encode("utf-8")
    cases.append((name, data, outcome))

def ev(slot, rx, ry):
    return str(slot) + B64[rx // 64] + B64[rx % 64] + B64[ry // 64] + B64[ry % 64]

# truncated
add("truncated-empty", b"", "reject notJSON")
add("truncated-open-brace", "{", "reject notJSON")
add("truncated-after-key", '{"Touches"', "reject notJSON")
add("truncated-mid-string", '{"Touches":"0AA', "reject notJSON")
add("truncated-mid-escape", '{"a":"\\u00', "reject badEscape")
add("truncated-no-close", '{"Touches":"0AAAA","TouchState":"' + "AAAA" + "====" * 9 + '"', "reject notJSON")
add("truncated-mid-number", '{"Orientation":1e', "reject badNumber")
add("truncated-utf8-at-end", b'{"a":"\xe2\x82', "reject invalidUTF8")
# huge
add("huge-over-64k", b'{"a":"' + b"a" * 65_530 + b'"}', "reject tooLarge")
pad = '{"pad":"%s","Touches":"' + ev(0, 2047, 2047) + '0====","TouchState":"' + FREE + '"}'
add("huge-max-udp-valid", pad % ("x" * (MAX_UDP - len(pad % ""))), "apply 2")
add("huge-max-udp-unterminated", b'{"Touches":"0AAAA","pad":"' + b"x" * (MAX_UDP - 26), "reject notJSON")
add("huge-whitespace", b" " * (MAX_UDP - 2) + b"{}", "apply 0")
add("huge-number", '{"Timestamp":' + "9" * 60_000 + "}", "reject numberOutOfRange")
add("huge-fraction", '{"Timestamp":0.' + "1" * 60_000 + "}", "apply 0")
add("huge-many-keys", "{" + ",".join('"k%d":%d' % (i, i) for i in range(5000)) + "}", "apply 0")
# deeply nested
add("nested-513-arrays", '{"a":' + "[" * 512 + "]" * 512 + "}", "reject tooDeep")
add("nested-511-arrays", '{"a":' + "[" * 511 + "]" * 511 + "}", "apply 0")
add("nested-60k-open-arrays", '{"a":' + "[" * 60_000, "reject tooDeep")
add("nested-objects-600", '{"a":' + '{"a":' * 600 + "1" + "}" * 601, "reject tooDeep")
add("nested-touches-in-object", '{"Body":{"Touches":"0AAAA","TouchState":"AAAA' + "====" * 9 + '"}}', "apply 0")
# duplicate keys: the last one wins
add("dup-touches-last-wins", '{"Touches":"0AAAA","Touches":"0===="}', "apply 1")
add("dup-touches-bad-then-good", '{"Touches":"0AA","Touches":"0===="}', "apply 1")
add("dup-touches-good-then-bad", '{"Touches":"0====","Touches":"0AA"}', "reject badTouches")
add("dup-state-down-then-free", '{"TouchState":"AAAA' + "====" * 9 + '","TouchState":"' + FREE + '"}', "apply 0")
add("dup-touches-1000", "{" + ",".join('"Touches":"%s"' % ev(0, i, i) for i in range(1000)) + ',"Touches":"0===="}', "apply 1")
add("dup-escaped-key", '{"Touches":"0AAAA","Touche\\u0073":"0===="}', "apply 1")
# NUL and invalid UTF-8
add("nul-raw-in-string", b'{"Touches":"0AA\x00AA"}', "reject controlCharacter")
add("nul-after-object", b'{"Touches":"0===="}\x00', "reject trailingGarbage")
add("nul-first-byte", b'\x00{"Touches":"0===="}', "reject notJSON")
add("nul-escaped-elsewhere", '{"userName":"a\\u0000b","Touches":"0===="}', "apply 1")
add("nul-escaped-in-touches", '{"Touches":"0AA\\u0000A"}', "reject badTouches")
add("utf8-overlong", b'{"userName":"\xc0\xaf"}', "reject invalidUTF8")
add("utf8-lone-continuation", b'{"userName":"\x80"}', "reject invalidUTF8")
add("utf8-encoded-surrogate", b'{"userName":"\xed\xa0\x80"}', "reject invalidUTF8")
add("utf8-above-10ffff", b'{"userName":"\xf4\x90\x80\x80"}', "reject invalidUTF8")
add("utf8-in-key", b'{"Touch\xffes":"0AAAA"}', "reject invalidUTF8")
add("utf8-in-touches", b'{"Touches":"0\xc3\xa9AA"}', "reject badTouches")
add("utf16le-bom", "\ufeff{}".encode("utf-16-le"), "reject notJSON")
add("utf8-bom-ok", b'\xef\xbb\xbf{"Touches":"0===="}', "apply 1")
add("unpaired-surrogate-escape", '{"userName":"\\ud800"}', "reject badSurrogate")
# numbers out of range and wrong types
add("number-1e400", '{"Orientation":1e400}', "reject numberOutOfRange")
add("number-minus-1e999-elsewhere", '{"Timestamp":-1e999}', "reject numberOutOfRange")
add("number-underflow", '{"Timestamp":1e-400}', "apply 0")
add("orientation-huge-integer", '{"Orientation":99999999999999999999999}', "apply 0")
add("orientation-negative", '{"Orientation":-3}', "apply 0")
add("orientation-fraction", '{"Orientation":1.5}', "reject wrongType")
add("orientation-string", '{"Orientation":"1"}', "reject wrongType")
add("number-leading-zero", '{"Timestamp":01}', "reject badNumber")
add("number-nan", '{"Timestamp":NaN}', "reject notJSON")
add("touches-number", '{"Touches":5}', "reject wrongType")
add("touches-array", '{"Touches":["0AAAA"]}', "reject wrongType")
add("touches-null", '{"Touches":null}', "reject wrongType")
add("state-object", '{"TouchState":{"0":"AAAA"}}', "reject wrongType")
add("top-level-array", '[{"Touches":"0AAAA"}]', "reject notAnObject")
add("two-objects", '{"Touches":"0AAAA"}{"Touches":"0===="}', "reject trailingGarbage")
add("trailing-comma", '{"Touches":"0AAAA",}', "reject notJSON")
# slots and coordinates out of range
add("slot-letter", '{"Touches":"aAAAA"}', "reject badSlot")
add("slot-colon", '{"Touches":":AAAA"}', "reject badSlot")
add("slot-minus", '{"Touches":"-AAAA"}', "reject badSlot")
add("slot-two-digits", '{"Touches":"10AAAA"}', "reject badSlot")
add("slot-arabic-indic-digit", '{"Touches":"\u0663AAAA"}', "reject badSlot")
add("coordinate-not-base64", '{"Touches":"0!!!!"}', "reject badTouches")
add("coordinate-half-end", '{"Touches":"0==AA"}', "reject badTouches")
add("coordinate-padding", '{"Touches":"0AA=="}', "reject badTouches")
add("state-39-chars", '{"TouchState":"' + FREE[:-1] + '"}', "reject badTouchState")
add("state-44-chars", '{"TouchState":"' + FREE + 'AAAA"}', "reject badTouchState")
add("state-bad-char", '{"TouchState":"!!!!' + "====" * 9 + '"}', "reject badTouchState")
add("touches-not-multiple-of-5", '{"Touches":"0AAA"}', "reject badTouches")
# many events
events = "".join(ev(i % 10, (i * 37) % 4096, (i * 91) % 4096) for i in range(9990)) + "".join("%d====" % s for s in range(10))
add("events-10000", '{"Touches":"' + events + '","TouchState":"' + FREE + '"}', "apply 10000")
events = "".join(ev(i % 10, (i * 13) % 4096, (i * 29) % 4096) for i in range(12_990)) + "".join("%d=0=0" % s for s in range(10))
add("events-13000-cancelled", '{"Touches":"' + events + '"}', "apply 13000")
add("events-all-ten-down", '{"Touches":"' + "".join(ev(s, 100 * s, 100 * s) for s in range(10)) + '"}', "apply 10")
add("events-same-slot-down-up-1000", '{"Touches":"' + (ev(3, 1000, 1000) + "3====") * 1000 + '"}', "apply 2000")
# the packets before leave ten fingers down; this one lifts them all (the corpus ends with nothing held)
add("zz-state-all-free", '{"Touches":"","TouchState":"' + FREE + '"}', "apply 0")


# --- TUIO 1.1 /tuio/2Dcur (OSC 1.0) ------------------------------------------------------------------
import struct

def osc_string(text):
    b = text if isinstance(text, bytes) else text.encode("utf-8")
    b += b"\0"
    return b + b"\0" * (-len(b) % 4)

def osc_message(address, *args, tags=None):
    """args: int -> i, float -> f, str -> s, (tag, bytes) -> raw argument."""
    t, data = ",", b""
    for a in args:
        if isinstance(a, tuple):
            t += a[0]; data += a[1]
        elif isinstance(a, bool):
            raise ValueError(a)
        elif isinstance(a, int):
            t += "i"; data += struct.pack(">i", a)
        elif isinstance(a, float):
            t += "f"; data += struct.pack(">f", a)
        else:
            t += "s"; data += osc_string(a)
    return osc_string(address) + osc_string(tags if tags is not None else t) + data

def osc_bundle(*elements):
    out = osc_string("#bundle") + b"\0" * 7 + b"\1"
    for e in elements:
        out += struct.pack(">i", len(e)) + e
    return out

def cur(*args):
    return osc_message("/tuio/2Dcur", *args)

def frame(alive, sets, fseq):
    parts = [cur("source", "hostile@127.0.0.1"), cur("alive", *alive)]
    parts += [cur("set", i, x, y, 0.0, 0.0, 0.0) for (i, x, y) in sets]
    parts.append(cur("fseq", fseq))
    return osc_bundle(*parts)

tuio_cases = []

def tadd(name, data, outcome):
    tuio_cases.append((name, data, outcome))

good = frame([1], [(1, 0.5, 0.5)], 10)
# truncated, bad sizes and alignment
tadd("truncated-empty", b"", "reject truncated")
tadd("truncated-bundle-header", osc_string("#bundle") + b"\0\0\0\0", "reject truncated")
tadd("truncated-bundle-cut", good[:-4], "reject truncated")
tadd("truncated-message-cut", cur("set", 1, 0.5, 0.5)[:-4] + b"\0\0\0\0"[:0], "reject truncated")
tadd("truncated-unaligned-message", cur("fseq", 11) + b"\0\0", "reject truncated")
tadd("size-larger-than-rest", osc_bundle(cur("fseq", 11))[:16] + struct.pack(">i", 4096) + cur("fseq", 11), "reject truncated")
tadd("size-negative", osc_bundle()[:16] + struct.pack(">i", -8) + cur("fseq", 11), "reject truncated")
tadd("size-zero", osc_bundle()[:16] + struct.pack(">i", 0) + cur("fseq", 11), "reject truncated")
tadd("size-unaligned", osc_bundle()[:16] + struct.pack(">i", 6) + cur("fseq", 11)[:6] + b"\0\0", "reject truncated")
tadd("size-int32-max", osc_bundle()[:16] + struct.pack(">i", 0x7FFFFFFF) + cur("fseq", 11), "reject truncated")
tadd("bundle-trailing-bytes", good + b"\0\0", "reject truncated")
tadd("huge-over-64k", osc_bundle(osc_message("/pad", "x" * 65_600)), "reject tooLarge")
# not OSC, bad strings, bad type tags
tadd("not-osc-text", b"hello world!", "reject notOSC")
tadd("not-osc-json", b'{"Touches":"0AAAA"}', "reject notOSC")
tadd("bundle-bad-tag", b"#bundlX\0" + good[8:], "reject notOSC")
tadd("address-no-nul", b"/tuio/2Dcur/abc", "reject truncated")
tadd("address-no-nul-aligned", b"/tuio/2Dcur/abcd", "reject badString")
tadd("address-bad-padding", b"/tuio\0x\0" + osc_string(",") , "reject badString")
tadd("argument-string-bad-padding", b"/tuio/2Dcur\0" + b",s\0\0" + b"ab\0x", "reject truncated")
tadd("no-type-tags", osc_string("/tuio/2Dcur"), "reject badTypeTags")
tadd("type-tags-without-comma", osc_string("/tuio/2Dcur") + osc_string("si") + osc_string("fseq") + struct.pack(">i", 11), "reject badTypeTags")
tadd("unsupported-type-tag", osc_message("/tuio/2Dcur", "fseq", ("x", b"\0\0\0\0")), "reject unsupportedType")
tadd("blob-huge-length", osc_message("/other", ("b", struct.pack(">i", 0x7FFFFFF0) + b"\0" * 4)), "reject truncated")
tadd("blob-negative-length", osc_message("/other", ("b", struct.pack(">i", -4) + b"\0" * 4)), "reject truncated")
tadd("more-tags-than-arguments", osc_message("/tuio/2Dcur", "fseq", 11, tags=",sii"), "reject truncated")
tadd("more-arguments-than-tags", osc_message("/tuio/2Dcur", "fseq", 11, tags=",s"), "reject truncated")
# nested bundles
def nest(levels, inner):
    for _ in range(levels):
        inner = osc_bundle(inner)
    return inner
tadd("nested-8-bundles", nest(7, frame([2], [(2, 0.25, 0.75)], 12)), "apply 1")
tadd("nested-9-bundles", nest(8, frame([2], [(2, 0.25, 0.75)], 13)), "reject tooDeep")
tadd("nested-2000-bundles", nest(2000, cur("fseq", 13)), "reject tooDeep")
# wrong TUIO type tags and commands
tadd("set-int-coordinates", osc_bundle(cur("alive", 3), cur("set", 3, 1, 1), cur("fseq", 14)), "reject badTUIO")
tadd("set-missing-y", osc_bundle(cur("alive", 3), cur("set", 3, 0.5), cur("fseq", 14)), "reject badTUIO")
tadd("set-float-id", osc_bundle(cur("alive", 3), cur("set", 3.0, 0.5, 0.5), cur("fseq", 14)), "reject badTUIO")
tadd("set-double-velocity", osc_bundle(cur("alive", 3), cur("set", 3, 0.5, 0.5, ("d", b"\0" * 8)), cur("fseq", 14)), "reject badTUIO")
tadd("alive-float-id", osc_bundle(cur("alive", 3.0), cur("fseq", 14)), "reject badTUIO")
tadd("alive-string-id", osc_bundle(cur("alive", "3"), cur("fseq", 14)), "reject badTUIO")
tadd("fseq-string", osc_bundle(cur("alive"), cur("fseq", "14")), "reject badTUIO")
tadd("fseq-two-arguments", osc_bundle(cur("alive"), cur("fseq", 14, 15)), "reject badTUIO")
tadd("fseq-missing", osc_bundle(cur("alive"), cur("fseq")), "reject badTUIO")
tadd("source-int", osc_bundle(cur("source", 5), cur("fseq", 14)), "reject badTUIO")
tadd("command-unknown", osc_bundle(cur("add", 3), cur("fseq", 14)), "reject badTUIO")
tadd("command-int", osc_bundle(cur(3), cur("fseq", 14)), "reject badTUIO")
tadd("command-missing", osc_bundle(cur(), cur("fseq", 14)), "reject badTUIO")
tadd("valid-frame-then-bad-message", osc_bundle(frame([4], [(4, 0.5, 0.5)], 14), cur("set", 4, 1, 1)), "reject badTUIO")
# NaN and infinite coordinates
tadd("coordinate-nan", frame([5], [(5, float("nan"), 0.5)], 15), "reject badTUIO")
tadd("coordinate-inf", frame([5], [(5, 0.5, float("inf"))], 15), "reject badTUIO")
tadd("coordinate-minus-inf", frame([5], [(5, float("-inf"), 0.5)], 15), "reject badTUIO")
tadd("velocity-nan", osc_bundle(cur("alive", 5), cur("set", 5, 0.5, 0.5, float("nan"), 0.0, 0.0), cur("fseq", 15)), "apply 1")
# coordinates and ids out of range (coordinates are clamped; ids are opaque)
tadd("coordinate-out-of-range", frame([5], [(5, 7.5, -3.0)], 16), "apply 1")
tadd("coordinate-huge", frame([5], [(5, 3.0e38, -3.0e38)], 17), "apply 1")
tadd("coordinate-denormal", frame([5], [(5, 1e-45, 1e-45)], 18), "apply 1")
tadd("id-extremes", frame([-2147483648, 2147483647, -1, 0], [(-2147483648, 0.1, 0.1), (2147483647, 0.9, 0.9), (-1, 0.5, 0.1), (0, 0.1, 0.5)], 19), "apply 1")
tadd("id-set-not-alive", frame([6], [(7, 0.5, 0.5)], 20), "apply 1")
tadd("ids-twelve-touches", frame(list(range(100, 112)), [(i, (i - 100) / 12.0, 0.5) for i in range(100, 112)], 21), "apply 1")
tadd("ids-same-id-set-twice", frame([6], [(6, 0.1, 0.1), (6, 0.9, 0.9)], 22), "apply 1")
# huge counts
tadd("alive-10000-ids", osc_bundle(cur("alive", *range(1000, 11000)), cur("set", 1000, 0.5, 0.5), cur("fseq", 23)), "apply 1")
tadd("set-1000-messages", osc_bundle(cur("alive", *range(1000, 1010)), *[cur("set", 1000 + i % 10, (i % 97) / 97.0, (i % 89) / 89.0) for i in range(1000)], cur("fseq", 24)), "apply 1")
tadd("fseq-1000-frames", osc_bundle(*[cur("fseq", 25 + i) for i in range(1000)]), "apply 1000")
tadd("messages-1500-other-profile", osc_bundle(*[osc_message("/tuio/2Dobj", "fseq", i) for i in range(1500)]), "apply 0")
tadd("other-types-other-address", osc_message("/other", ("h", b"\0" * 8), ("t", b"\0" * 8), ("d", b"\0" * 8), ("T", b""), ("F", b""), ("N", b""), ("I", b""), ("c", b"\0\0\0a"), ("r", b"\0" * 4), ("m", b"\0" * 4), ("b", struct.pack(">i", 3) + b"abc\0")), "apply 0")
# frame order: late frames are dropped, a restarted sender (more than 100 lower) is accepted
tadd("fseq-late", frame([8], [(8, 0.5, 0.5)], 1000), "late 1")
tadd("fseq-restart", frame([8], [(8, 0.5, 0.5)], 1), "apply 1")
tadd("fseq-negative-always-applies", frame([8], [(8, 0.6, 0.6)], -1), "apply 1")
tadd("pending-without-fseq", osc_bundle(cur("alive", 9), cur("set", 9, 0.5, 0.5)), "apply 0")
tadd("pending-completed-by-fseq", osc_bundle(cur("fseq", 2)), "apply 1")
# the frames before leave a touch live; this one ends them all (the corpus ends with nothing held)
tadd("zz-alive-empty", frame([], [], 3), "apply 1")

def write(root, entries, header):
    os.makedirs(root, exist_ok=True)
    for f in os.listdir(root):
        os.remove(os.path.join(root, f))
    lines = []
    for i, (name, data, outcome) in enumerate(entries):
        fname = "%03d-%s.bin" % (i, name)
        with open(os.path.join(root, fname), "wb") as f:
            f.write(data)
        lines.append("%s %s" % (fname, outcome))
    with open(os.path.join(root, "MANIFEST"), "w") as f:
        f.write(header + "\n")
        f.write("\n".join(lines) + "\n")
    print("wrote %d datagrams to %s" % (len(entries), os.path.normpath(root)))

def main():
    os.makedirs(ROOT, exist_ok=True)
    for f in os.listdir(ROOT):
        os.remove(os.path.join(ROOT, f))
    lines = []
    for i, (name, data, outcome) in enumerate(cases):
        fname = "%03d-%s.bin" % (i, name)
        with open(os.path.join(ROOT, fname), "wb") as f:
            f.write(data)
        lines.append("%s %s" % (fname, outcome))
    with open(os.path.join(ROOT, "MANIFEST"), "w") as f:
        f.write("# <file> reject <PoseAIDecodeError.Reason> | <file> apply <Touches events>; see scripts/hostile-corpus.py\n")
        f.write("\n".join(lines) + "\n")
    print("wrote %d datagrams to %s" % (len(cases), os.path.normpath(ROOT)))
    write(os.path.join(CORPUS, "tuio-hostile"), tuio_cases,
          "# <file> reject <OSCDropReason> | apply <frames> | late <frames>; see scripts/hostile-corpus.py")

main()
