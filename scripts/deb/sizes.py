#!/usr/bin/env python3
"""What a release binary is made of, by size: its symbols (`nm --print-size`) grouped by what they come
from (BoringSSL, NIO, Hummingbird and the web stack, the Swift runtime and standard library, the
program's own modules, ...), and the sections (`size -A`) they sit in. Run on an unstripped binary
(`make deb` runs it on the release build before stripping).

Usage: scripts/deb/sizes.py BINARY
"""
import re
import subprocess
import sys
from collections import defaultdict

# Swift modules (from a mangled name's `$s<length><module>`) to groups.
GROUPS = [
    ("BoringSSL (NIOSSL's TLS)", lambda m: m.startswith("CNIOBoringSSL")),
    ("NIO (swift-nio, nio-ssl, nio-extras, nio-http2)", lambda m: m.startswith(("NIO", "_NIO", "CNIO"))),
    ("Hummingbird, WebSocket, HTTP types", lambda m: m.startswith(("Hummingbird", "WSCore", "WSCompression",
                                                                    "HTTPTypes", "CompressNIO", "WebSocket"))),
    ("swift-crypto, certificates, ASN.1", lambda m: m.startswith(("Crypto", "_Crypto", "X509", "SwiftASN1", "CCrypto", "_CertificateInternals"))),
    ("FoundationEssentials", lambda m: m.startswith(("FoundationEssentials", "_FoundationCShims", "_FoundationCollections"))),
    ("Swift runtime and standard library", lambda m: m in ("Swift", "_Concurrency", "_StringProcessing", "_RegexParser",
                                                           "Synchronization", "SwiftGlibc", "Glibc", "Dispatch", "__C", "So", "Distributed")),
    ("swift-collections, algorithms, atomics, async-algorithms", lambda m: m in ("DequeModule", "OrderedCollections", "Collections",
        "HeapModule", "BasicContainers", "ContainersPreview", "InternalCollectionsUtilities", "Algorithms", "Atomics", "_AtomicsShims",
        "AsyncAlgorithms", "RealModule", "_NumericsShims")),
    ("service-lifecycle, log, metrics, tracing, argument-parser", lambda m: m in ("ServiceLifecycle", "UnixSignals", "Logging",
        "CoreMetrics", "Metrics", "Tracing", "Instrumentation", "ServiceContextModule", "ArgumentParser", "ArgumentParserToolInfo", "SystemPackage")),
    ("touchbridge's own modules", lambda m: m.startswith(("Touch", "touchbridge", "CX11", "CWayland", "CQRencode", "CToml"))),
]


def module_of(symbol):
    """The Swift module of a mangled symbol, or a C family for an unmangled one."""
    if symbol.startswith("$s"):
        rest = symbol[2:]
        if rest.startswith("s"):
            return "Swift"
        if rest.startswith("S"):  # a standard substitution: Swift's own types (Si, SS, Sa, ...), or So (C)
            return "So" if rest.startswith("So") else "Swift"
        m = re.match(r"(\d+)", rest)
        if m:
            n = int(m.group(1))
            return rest[len(m.group(1)):len(m.group(1)) + n]
        return "Swift"
    if symbol.startswith("CNIOBoringSSL") or symbol.startswith("OPENSSL_") or symbol.startswith("BORINGSSL"):
        return "CNIOBoringSSL"
    if symbol.startswith(("swift_", "_swift", "swift::", "__swift", "_ZN5swift", "_ZNK5swift", "$ss", "_T0")):
        return "Swift"
    if symbol.startswith("tb_toml"):
        return "CToml"
    if symbol.startswith("c_nio") or symbol.startswith("CNIO"):
        return "NIO"
    if symbol.startswith("_Z"):
        return "C++ (runtime's LLVM support, libstdc++ inlines, toml++ shim)"
    return "other C"


def group_of(module):
    for name, test in GROUPS:
        if test(module):
            return name
    return module


def main():
    binary = sys.argv[1]
    out = subprocess.run(["nm", "--print-size", "--size-sort", "--radix=d", binary], capture_output=True, text=True,
                         check=True).stdout
    sizes, modules = defaultdict(int), defaultdict(lambda: defaultdict(int))
    for line in out.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) < 4:
            continue
        size, kind, symbol = int(parts[1]), parts[2], parts[3]
        if kind in "Uuvw":
            continue
        module = module_of(symbol)
        group = group_of(module)
        sizes[group] += size
        modules[group][module] += size
    sections = subprocess.run(["size", "-A", binary], capture_output=True, text=True, check=True).stdout
    loaded = 0
    section_sizes = {}
    for line in sections.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            section_sizes[parts[0]] = int(parts[1])
            if not parts[0].startswith((".debug", ".comment", ".note", ".symtab", ".strtab")):
                loaded += int(parts[1])
    total = sum(sizes.values())
    print(f"{binary}: {loaded / 1e6:.1f} MB in loaded sections, {total / 1e6:.1f} MB of it in sized symbols")
    ranked = sorted(sizes.items(), key=lambda kv: -kv[1])
    # Below 10 kB: generic parameters and nested names that the module heuristic cannot place, together.
    small = [(g, s) for g, s in ranked if s < 10_000]
    for group, size in ranked:
        if size < 10_000:
            continue
        top = sorted(modules[group].items(), key=lambda kv: -kv[1])[:4]
        detail = ", ".join(f"{m} {s / 1e6:.2f}" for m, s in top) if len(modules[group]) > 1 else ""
        print(f"  {size / 1e6:6.2f} MB  {group}" + (f"  ({detail})" if detail else ""))
    if small:
        print(f"  {sum(s for _, s in small) / 1e6:6.2f} MB  {len(small)} smaller groups")
    print("  sections: " + ", ".join(f"{s} {section_sizes[s] / 1e6:.1f}" for s in
                                    (".text", ".rodata", ".data", ".data.rel.ro", ".eh_frame", "swift5_typeref",
                                     ".rela.dyn") if s in section_sizes) + " MB")


if __name__ == "__main__":
    main()
