#!/usr/bin/env python3
"""Writes the hostile PoseAI corpus: Tests/Corpus/poseai-hostile/*.bin and its MANIFEST.

Each datagram is a file; MANIFEST says what the daemon must do with it, one line per file:
    <file> reject <reason>            the decoder drops it for PoseAIDecodeError.Reason <reason>
    <file> apply <events>             it decodes, with <events> Touches events, and is applied
Files are replayed in name order (unit test: decoder + core; integration test: as datagrams to the
real daemon). Replayed in that order from an idle core, no button is held after the last file.
Regenerate with `scripts/hostile-corpus.py` after editing; the output is deterministic.
To add a listener (TUIO, WebSocket), add a sibling directory with its own MANIFEST.
"""
import os, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Corpus", "poseai-hostile")
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

main()
