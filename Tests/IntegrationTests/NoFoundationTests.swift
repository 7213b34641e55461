// No full Foundation in the binary. Foundation brings FoundationInternationalization and
// ICU (34 MB of data, megabytes of resident code); FoundationEssentials, which the dependencies use on
// Linux, is allowed. Checked on the built binary itself: the libraries it loads (ldd, for a dynamic
// build) and the symbols it defines or needs (nm, which also sees a static build's linked-in modules).
import Foundation
import Testing

@Suite struct NoFoundationTests {
    /// The standard output of `program arguments` (which must exit 0).
    static func output(_ program: String, _ arguments: [String]) throws -> String {
        guard let path = findInPath(program) else {
            throw RigError("\(program) is not installed (scripts/deps.sh installs binutils); this test needs it and does not skip")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RigError("\(program) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The shared objects of full Foundation (swift-corelibs-foundation and its ICU).
    static let foundationLibraries = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
                                      "libFoundationNetworking.so", "libFoundationXML.so"]

    @Test func theBinaryLoadsNoFoundationLibrary() throws {
        let binary = try Binaries.touchbridge()
        let libraries = try Self.output("ldd", [binary]).split(separator: "\n").map {
            String($0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " })
        }
        // The listing was read: the C library is always there.
        #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed no libc:\n\(libraries)")
        for library in libraries where Self.foundationLibraries.contains(where: library.hasPrefix) {
            Issue.record("\(binary) loads \(library): full Foundation is back (use FoundationEssentials, Glibc or the standard library)")
        }
    }

    /// Swift mangles a module's symbols with its name's length and the name: `$s10Foundation…` for
    /// Foundation, `$s30FoundationInternationalization…`; ICU's C functions carry its version (`ucol_open_74`)
    /// and its data is one symbol (`icudt74_dat`). Defined (a static build) or undefined (a dynamic one),
    /// any of them means full Foundation is linked.
    @Test func theBinaryHasNoFoundationSymbols() throws {
        let binary = try Binaries.touchbridge()
        let symbols = try Self.output("nm", ["--format=just-symbols", binary]).split(separator: "\n")
        // The symbol table was read: the program's own module is in it (an unstripped build is tested).
        #expect(symbols.contains { $0.hasPrefix("$s11touchbridge") },
                "no touchbridge symbols in \(binary): test an unstripped build")
        // FoundationEssentials is allowed; its prefix is `$s19FoundationEssentials`.
        let forbidden = ["$s10Foundation", "$s30FoundationInternationalization", "$s20FoundationNetworking"]
        let found = symbols.filter { symbol in
            forbidden.contains { symbol.hasPrefix($0) } || symbol.hasPrefix("icudt") || symbol.hasPrefix("ucol_open")
        }
        #expect(found.isEmpty, "\(binary) links full Foundation: \(found.count) symbols, e.g. \(found.prefix(5))")
    }

    /// libsystemd (sd-bus, for the portal backend) is loaded with dlopen when the portal is asked for, not
    /// linked: it brings libgcrypt, liblz4, libzstd, liblzma and libcap, 0.8 MB resident in every daemon.
    @Test func theBinaryLoadsLibsystemdOnlyForThePortal() throws {
        let binary = try Binaries.touchbridge()
        let needed = try Self.output("readelf", ["-d", binary]).split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libc.so") }, "readelf listed no libc:\n\(needed)")
        #expect(!needed.contains { $0.contains("libsystemd") }, "\(binary) links libsystemd again:\n\(needed.joined(separator: "\n"))")
    }
}
