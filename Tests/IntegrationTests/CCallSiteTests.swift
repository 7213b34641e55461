// The C layers' rule, checked on the source tree: every Xlib, XTest, XInput2, RandR, Shape and cairo
// function, and every libwayland-client, xdg-output and virtual keyboard glue and libxkbcommon one,
// and every sd-bus and libei (CPortal's shim) one, is
// called from exactly one place in Sources/, that place is one of the wrapper files (TouchX11's XDisplay*.swift and Cairo.swift,
// TouchWayland's WaylandDisplay*.swift; the config file's toml++ shim: touchbridge's TOMLDocument.swift; TouchPortal's
// DBusConnection.swift and EIContext.swift),
// and a comment of the enclosing declaration names the C function.
import Foundation
import Testing

@Suite struct CCallSiteTests {
    /// One call of a C function in a Swift source file.
    struct CallSite: CustomStringConvertible {
        var function: String
        var file: String
        var line: Int
        var description: String { "\(function) at \(file):\(line)" }
    }

    /// The header directories of the C libraries the X layer uses (Debian's libx11-dev, libxtst-dev,
    /// libxi-dev, libxrandr-dev, libxext-dev, libcairo2-dev), and the shim's own header.
    static let headerDirectories = ["/usr/include/X11", "/usr/include/cairo", "/usr/include/xkbcommon"]
    /// libwayland-client's headers (Debian's libwayland-dev), TouchWayland's shims and the generated
    /// xdg-output glue; and the config file's toml++ shim (CToml).
    static let headerFiles = ["/usr/include/wayland-client-core.h", "/usr/include/wayland-client-protocol.h",
                              "/usr/include/wayland-util.h"]
        + ["/Sources/CWayland/shim.h", "/Sources/CWaylandProtocols/include/tb_xdg_output.h",
           "/Sources/CWaylandProtocols/include/xdg-output-unstable-v1-client-protocol.h",
           "/Sources/CWaylandProtocols/include/tb_virtual_keyboard.h",
           "/Sources/CWaylandProtocols/include/virtual-keyboard-unstable-v1-client-protocol.h",
           "/Sources/CToml/include/tb_toml.h", "/Sources/CPortal/include/tb_portal.h",
           "/Sources/CCapture/include/tb_capture.h"].map { Binaries.packageRoot + $0 }
        + ["/usr/include/systemd/sd-bus.h"]
        // The XTest input requests through the display's xcb connection (libxcb1-dev, libxcb-xtest0-dev).
        + ["/usr/include/xcb/xcb.h", "/usr/include/xcb/xtest.h"]
        // The live view's XDamage and JPEG encoder (libxdamage-dev, libturbojpeg0-dev), called through
        // CCapture's shim (loaded at run time) in XDisplay+Capture.swift: a direct call would not link.
        + ["/usr/include/turbojpeg.h"]

    /// Every function name these headers declare (or define as a macro) that starts with `X` or
    /// `cairo_`, plus the shim's `tb_` helpers; not the type names (`typedef unsigned long XID;`,
    /// `} XRectangle;`), whose Swift conversions look like calls.
    static func cFunctionNames() throws -> Set<String> {
        try names.get().functions
    }

    /// The type names the same headers declare (`typedef ... XID;`, `} XRectangle;`, `struct wl_registry_listener {`).
    static func cTypeNames() throws -> Set<String> {
        try names.get().types
    }

    /// The headers, read once for every test here.
    static let names = Result { try cNames() }

    static func cNames() throws -> (functions: Set<String>, types: Set<String>) {
        var names = Set<String>(), types = Set<String>()
        var files = [Binaries.packageRoot + "/Sources/CX11/shim.h"] + headerFiles
        for directory in headerDirectories {
            guard let walker = FileManager.default.enumerator(atPath: directory) else { continue }
            for case let path as String in walker where path.hasSuffix(".h") { files.append(directory + "/" + path) }
        }
        let prefixes = "X|cairo_|tb_|wl_|zxdg_|zwp_|xkb_|sd_bus_|xcb_|tj"
        let pattern = try Regex(#"\b((?:"# + prefixes + #")[A-Za-z0-9_]*)\s*\("#)
        let typeName = try Regex(#"(?:typedef\s[^;{}()]*?|\}\s*)\b((?:"# + prefixes + #")[A-Za-z0-9_]*)\s*;|(?:struct|union)\s+((?:"# + prefixes + #")[A-Za-z0-9_]*)\s*\{"#)
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for match in text.matches(of: pattern) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
            for match in text.matches(of: typeName) {
                if let name = match.output[1].substring ?? match.output[2].substring { types.insert(String(name)) }
            }
        }
        return (names.subtracting(types), types)
    }

    /// `source` with comments and string literals blanked out (same length, newlines kept), so that a
    /// C name in a comment or a message is not a call.
    static func code(of source: String) -> [Character] {
        var out = Array(source)
        var i = 0
        func blank(_ range: Range<Int>) { for k in range where out[k] != "\n" { out[k] = " " } }
        while i < out.count {
            if out[i] == "/", i + 1 < out.count, out[i + 1] == "/" {
                var j = i
                while j < out.count, out[j] != "\n" { j += 1 }
                blank(i..<j); i = j
            } else if out[i] == "/", i + 1 < out.count, out[i + 1] == "*" {
                var j = i + 2
                while j + 1 < out.count, !(out[j] == "*" && out[j + 1] == "/") { j += 1 }
                j = min(out.count, j + 2)
                blank(i..<j); i = j
            } else if out[i] == "\"" {
                var j = i + 1
                while j < out.count, out[j] != "\"" { j += out[j] == "\\" ? 2 : 1 }
                blank(i + 1..<min(j, out.count)); i = j + 1
            } else {
                i += 1
            }
        }
        return out
    }

    /// Every call of one of `functions` in the Swift files under `root`: the name followed by `(` or
    /// a trailing closure's `{`, but not a Swift initializer of an imported C struct (`XRectangle(x:`,
    /// `XEvent()`) and not a declaration (`struct XWindow {`).
    static func callSites(under root: String, of functions: Set<String>) throws -> [CallSite] {
        var sites: [CallSite] = []
        let call = try Regex(#"\b([A-Za-z_][A-Za-z0-9_]*)\s*[({]"#)
        // A C function is imported without argument labels, so `Name(label:` is a struct's initializer;
        // `Name()` is one only when the headers declare `Name` as a type (`XEvent()`), else a call with
        // no arguments (`tb_ei_load()`).
        let initializer = try Regex(#"^[A-Za-z_][A-Za-z0-9_]*\s*\(\s*[A-Za-z_][A-Za-z0-9_]*\s*:"#)
        let noArguments = try Regex(#"^[A-Za-z_][A-Za-z0-9_]*\s*\(\s*\)"#)
        let types = try cTypeNames()
        let declaration = try Regex(#"(struct|class|enum|extension|protocol|func|typealias)\s+$"#)
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = String(code(of: try String(contentsOfFile: root + "/" + path, encoding: .utf8)))
            var line = 1, counted = text.startIndex
            for match in text.matches(of: call) {
                guard let name = match.output[1].substring, functions.contains(String(name)) else { continue }
                if text[match.range.lowerBound...].prefixMatch(of: initializer) != nil { continue }
                if types.contains(String(name)), text[match.range.lowerBound...].prefixMatch(of: noArguments) != nil { continue }
                let from: String.Index = text.index(match.range.lowerBound, offsetBy: -20, limitedBy: text.startIndex) ?? text.startIndex
                let before: Substring = text[from..<match.range.lowerBound]
                if before.firstMatch(of: declaration) != nil { continue }
                line += text[counted..<match.range.lowerBound].reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
                counted = match.range.lowerBound
                sites.append(CallSite(function: String(name), file: path, line: line))
            }
        }
        return sites.sorted { ($0.file, $0.line) < ($1.file, $1.line) }
    }

    /// The comments that document the code at `line` (1-based) of `lines`: those between the nearest
    /// function or initializer declaration above it (or on it) and the line, and the comment block
    /// right above that declaration.
    static func comments(around line: Int, in lines: [Substring]) throws -> String {
        let isDeclaration = try Regex(#"^\s*(@\w+\s+)*((public|private|fileprivate|internal|static|class|final|override|mutating|consuming|nonisolated)\s+)*(func\s|init\s*[(<?!]|deinit\b|subscript\b)"#)
        var text = ""
        var k = line - 1
        while k >= 0 {
            let l = lines[k]
            if l.trimmingCharacters(in: .whitespaces).hasPrefix("//") { text += l + "\n" }
            if l.prefixMatch(of: isDeclaration) != nil { break }
            k -= 1
        }
        k -= 1
        while k >= 0 {
            let l = lines[k].trimmingCharacters(in: .whitespaces)
            guard l.hasPrefix("//") || l.hasPrefix("@") else { break }
            text += l + "\n"
            k -= 1
        }
        return text
    }

    static let sourcesRoot = Binaries.packageRoot + "/Sources"

    /// The files allowed to call C: TouchX11's wrappers, TouchWayland's, and the TOML shim's.
    static func isWrapperFile(_ path: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        return path.hasPrefix("TouchX11/") && (name.hasPrefix("XDisplay") || name == "Cairo.swift")
            || path.hasPrefix("TouchWayland/") && name.hasPrefix("WaylandDisplay") || path == "touchbridge/TOMLDocument.swift"
            || path == "TouchPortal/DBusConnection.swift" || path == "TouchPortal/EIContext.swift"
    }

    @Test func theHeadersAreReadAndTheScannerFindsCalls() throws {
        let functions = try Self.cFunctionNames()
        // The scan must see the libraries, or every other test here would pass on nothing.
        for known in ["XOpenDisplay", "XCreateWindow", "XIQueryDevice", "XRRGetMonitors", "XShapeCombineMask",
                      "XTestFakeKeyEvent", "cairo_create", "cairo_xlib_surface_create", "XShmGetImage", "XDamageCreate",
                      "tjCompress2"] {
            #expect(functions.contains(known), "\(known) not found in \(Self.headerDirectories)")
        }
        let sites = try Self.callSites(under: Self.sourcesRoot, of: functions)
        #expect(sites.count >= 80, "only \(sites.count) C call sites found: the scanner is broken")
        #expect(sites.contains { $0.function == "XOpenDisplay" })
        #expect(sites.contains { $0.function == "XSetErrorHandler" }, "a call with a trailing closure was missed")
        #expect(!sites.contains { ["XRectangle", "XEvent", "XID"].contains($0.function) }, "a C type's initializer was taken for a call")
        #expect(sites.contains { $0.function == "tb_ei_load" }, "a call with no arguments was missed")
        for known in ["wl_display_connect", "wl_registry_bind", "zxdg_output_manager_v1_get_xdg_output", "xkb_keymap_new_from_string",
                      "zwp_virtual_keyboard_v1_key", "tb_memfd_create"] {
            #expect(functions.contains(known), "\(known) not found in the Wayland and xkbcommon headers")
            #expect(sites.contains { $0.function == known }, "the call of \(known) was not found")
        }
        for known in ["xcb_test_fake_input", "xcb_flush", "xcb_total_read", "xcb_get_extension_data", "XGetXCBConnection"] {
            #expect(functions.contains(known), "\(known) not found in xcb's and Xlib-xcb's headers")
            #expect(sites.contains { $0.function == known }, "the call of \(known) was not found")
        }
        for known in ["tb_toml_parse", "tb_toml_count", "tb_toml_item_at", "tb_toml_free"] {
            #expect(functions.contains(known), "\(known) not found in CToml's header")
            #expect(sites.contains { $0.function == known }, "the call of \(known) was not found")
        }
        // The live view's loader and shims (CCapture's).
        for known in ["tb_capture_load", "tb_XDamageCreate", "tb_tjCompress2", "tb_tjDestroy"] {
            #expect(functions.contains(known), "\(known) not found in CCapture's header")
            #expect(sites.contains { $0.function == known }, "the call of \(known) was not found")
        }
        // The portal's: the sd-bus and libei shims (CPortal's), the loader and the variadic bind included.
        for known in ["tb_sd_bus_load", "tb_sd_bus_call", "tb_sd_bus_match_signal", "tb_sd_bus_message_append_basic", "tb_ei_dispatch",
                      "tb_ei_seat_bind_capabilities", "tb_ei_device_frame"] {
            #expect(functions.contains(known), "\(known) not found in sd-bus.h or CPortal's header")
            #expect(sites.contains { $0.function == known }, "the call of \(known) was not found")
        }
        #expect(!sites.contains { $0.function == "wl_registry_listener" }, "a listener struct's initializer was taken for a call")
    }

    @Test func everyCFunctionHasOneCallSite() throws {
        let sites = try Self.callSites(under: Self.sourcesRoot, of: try Self.cFunctionNames())
        let byFunction = Dictionary(grouping: sites, by: \.function)
        for (function, calls) in byFunction.sorted(by: { $0.key < $1.key }) where calls.count > 1 {
            Issue.record("\(function) is called from \(calls.count) places: \(calls.map { "\($0.file):\($0.line)" }.joined(separator: ", "))")
        }
    }

    @Test func cIsCalledOnlyFromTheWrapperFiles() throws {
        let sites = try Self.callSites(under: Self.sourcesRoot, of: try Self.cFunctionNames())
        for site in sites where !Self.isWrapperFile(site.file) {
            Issue.record("\(site): C called outside the wrapper files (TouchX11's XDisplay*.swift and Cairo.swift, TouchWayland's WaylandDisplay*.swift, touchbridge/TOMLDocument.swift, TouchPortal's DBusConnection.swift and EIContext.swift)")
        }
    }

    @Test func everyCallSiteIsNamedInItsDocComment() throws {
        let sites = try Self.callSites(under: Self.sourcesRoot, of: try Self.cFunctionNames())
        var lines: [String: [Substring]] = [:]
        for site in sites {
            if lines[site.file] == nil {
                lines[site.file] = try String(contentsOfFile: Self.sourcesRoot + "/" + site.file, encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
            }
            let text = try Self.comments(around: site.line, in: lines[site.file]!)
            if !text.contains("`\(site.function)`") {
                Issue.record("\(site): no comment of the enclosing declaration names `\(site.function)`")
            }
        }
    }
}
