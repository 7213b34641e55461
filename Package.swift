// swift-tools-version: 6.1
// touchbridge: a phone as touchpad, touchscreen and presentation remote for an X11 desktop.
//
// Data flows one way, one module per arrow:
//   bytes ─TouchNet/TouchWeb (gate)→ ─TouchWire (decode)→ TouchPacket ─TouchCore (Bridge)→ effects
//   ─TouchOutput (InputOutput: TouchX11's XTestOutput or TouchUInput's devices; Desktop: X11Desktop, …)→ desktop
// TouchDaemon runs the lifecycle and hosts the Bridge on one event loop; the `touchbridge` executable
// only parses options. See docs/architecture.md.
import PackageDescription

let package = Package(
    name: "touchbridge",
    products: [
        .executable(name: "touchbridge", targets: ["touchbridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The config file (shell only: the core gets a plain settings struct).
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The web touchpad: HTTP and WebSocket server on the same SwiftNIO event loop.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // Xlib + XTest + XInput2 + RandR, and for the overlay XShape and cairo's Xlib surface.
        // Debian: libx11-dev libxtst-dev libxi-dev libxrandr-dev libxext-dev libcairo2-dev.
        // Only TouchX11 imports it.
        .systemLibrary(
            name: "CX11",
            pkgConfig: "x11 xtst xi xrandr xext cairo-xlib",
            providers: [.apt(["libx11-dev", "libxtst-dev", "libxi-dev", "libxrandr-dev", "libxext-dev", "libcairo2-dev"])]
        ),
        // libqrencode, for the pairing URL as a QR code in the terminal. Debian: libqrencode-dev.
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // The pure core: standard library only. No Foundation, no I/O, no clock.
        .target(name: "TouchCore"),
        // Wire decoders into the core's packet type. Standard library only.
        .target(name: "TouchWire", dependencies: ["TouchCore"]),
        // The two interfaces the Bridge's effects are performed on (`InputOutput`: XTest or uinput;
        // `Desktop`: X11, Wayland or none), and the one tested choice between them. Standard library only.
        .target(name: "TouchOutput", dependencies: ["TouchCore"]),
        // The one owner of the X connection: typed wrappers over every Xlib/XTest call; the X11 desktop and
        // the XTest input output.
        .target(name: "TouchX11", dependencies: ["CX11", "TouchCore", "TouchOutput"]),
        // The uinput output backend: kernel input devices (touchscreen, touchpad, pointer, keyboard) through
        // /dev/uinput. Standard library and Glibc only.
        .target(name: "TouchUInput", dependencies: ["TouchCore", "TouchOutput"]),
        // Transports on SwiftNIO: sockets in, decoded packets out.
        .target(name: "TouchNet", dependencies: [
            "TouchCore", "TouchWire",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The web touchpad: the page (embedded), pairing, and the WebSocket into the same sink.
        .target(name: "TouchWeb", dependencies: [
            "TouchCore", "TouchWire", "TouchNet",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The shell: the daemon's lifecycle (one start path, one teardown path), the host that hands
        // every input to the Bridge and performs its effects, the signal and X watchers.
        .target(name: "TouchDaemon", dependencies: [
            "TouchCore", "TouchOutput", "TouchNet", "TouchWeb", "TouchX11", "TouchUInput", "CQRencode",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The command line: options and the config file into settings, then the lifecycle.
        .executableTarget(name: "touchbridge", dependencies: [
            "TouchCore", "TouchWire", "TouchOutput", "TouchX11", "TouchNet", "TouchWeb", "TouchDaemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        // Test support: an independent X client in plain C that prints the XInput2 raw events
        // and pointer positions it observes, with monotonic timestamps. Not installed.
        .executableTarget(
            name: "xobserve",
            linkerSettings: [.linkedLibrary("X11"), .linkedLibrary("Xi")]
        ),
        // Test support for the VM tests (scripts/vm/): TouchUInput's devices driven by commands on stdin.
        // Not installed.
        .executableTarget(name: "uinput-drive", dependencies: ["TouchUInput", "TouchOutput", "TouchCore"]),
        // Test support: counts the calling thread's heap allocations (interposes malloc in the test
        // binary only), for the zero-allocation checks of the hot path.
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // Test support, written once: the packets tests and benchmarks send (PoseAI JSON, TUIO/OSC),
        // and the `TouchSink` the adapter tests hand input to (the real Bridge, its effects kept).
        .target(name: "TouchTestSupport", dependencies: ["TouchCore"], path: "Tests/TouchTestSupport"),
        // Benchmarks (`make bench`, release only; see Benchmarks/README.md): the in-process harness,
        // and the C reference client that gives the X server's own floor.
        .executableTarget(
            name: "touchbridge-bench",
            dependencies: ["TouchCore", "TouchWire", "TouchX11", "AllocationCounter", "TouchTestSupport"],
            path: "Benchmarks/touchbridge-bench"
        ),
        .executableTarget(
            name: "xtest-reference",
            path: "Benchmarks/xtest-reference",
            linkerSettings: [.linkedLibrary("X11"), .linkedLibrary("Xtst")]
        ),
        // The ideal bridge (the end-to-end rows' reference): recvfrom, a string search, XTest, XFlush.
        .executableTarget(
            name: "ideal-bridge",
            path: "Benchmarks/ideal-bridge",
            linkerSettings: [.linkedLibrary("X11"), .linkedLibrary("Xtst")]
        ),
        .testTarget(name: "TouchCoreTests", dependencies: ["TouchCore", "TouchWire", "AllocationCounter"]),
        // The backend and desktop choice, a pure function (`OutputChoice.choose`).
        .testTarget(name: "TouchOutputTests", dependencies: ["TouchOutput", "TouchCore"]),
        .testTarget(name: "TouchWireTests", dependencies: ["TouchWire", "TouchCore", "AllocationCounter", "TouchTestSupport"]),
        // The UDP adapters in-process, on NIO's EmbeddedChannel.
        .testTarget(name: "TouchNetTests", dependencies: [
            "TouchNet", "TouchCore", "TouchTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "TouchWebTests", dependencies: [
            "TouchWeb", "TouchCore", "TouchWire", "TouchNet", "TouchTestSupport", .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Read from the source tree by path (like the man page), not bundled: Recordings/; browser_driver.py, the
        // Playwright client (run with .build/browser-venv's python) driving Chromium for the web page test; Fixtures/, a
        // self-signed certificate for 127.0.0.1 and its key, for the HTTPS test only.
        .testTarget(name: "IntegrationTests", dependencies: ["TouchCore", "TouchTestSupport"],
                    exclude: ["Recordings", "Support/browser_driver.py", "Support/tls_flood.py", "Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
