// The page's routes with Hummingbird's testing module, through the router in process (`.router`: a live
// server's client gave up on a loaded run, its reads timing out while blocking integration suites held
// the test process's threads; the sockets are covered end to end by the suites named below). Who
// reaches them at all is decided once, at accept (`AdmittedChannel`: AdmissionTests, and end to end
// WebHardeningTests). The WebSocket upgrade and its gate are tested end to end (WebTouchpadTests,
// WebHardeningTests).
import Hummingbird
import HummingbirdTesting
import Testing
import TouchCore
@testable import TouchWeb

@Suite struct WebRoutesTests {
    static func app() -> some ApplicationProtocol {
        Application(router: WebServer.router(),
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test func anAllowedPeerGetsThePageAndTheHealthCheck() async throws {
        try await Self.app().test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(response.headers[.cacheControl] == "no-store")
                #expect(String(buffer: response.body).contains("<html"))
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "ok\n")
            }
            try await client.execute(uri: "/ws", method: .get) { response in
                #expect(response.status == .forbidden, "a GET of /ws without an upgrade is refused")
            }
            try await client.execute(uri: "/nothing-here", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// Each of the page's files (web/, embedded at build time) at its path, with its type and the page's
    /// caching; index.html at `/` loads the stylesheet and the first module, and every module it imports
    /// is served.
    @Test func thePagesFilesAreServedWithTheirTypes() async throws {
        let paths = WebPage.paths
        #expect(paths.contains("/") && paths.contains("/page.css") && paths.contains("/main.js"), "\(paths)")
        #expect(Set(paths).count == paths.count, "a path served twice: \(paths)")
        try await Self.app().test(.router) { client in
            for path in paths {
                try await client.execute(uri: path, method: .get) { response in
                    let type = path == "/" ? "text/html; charset=utf-8"
                        : path.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType] == type, "\(path)")
                    #expect(response.headers[.cacheControl] == "no-store", "\(path)")
                    let body = String(buffer: response.body)
                    #expect(!body.isEmpty, "\(path)")
                    if path == "/" {
                        #expect(body.contains(#"<link rel="stylesheet" href="/page.css">"#))
                        #expect(body.contains(#"<script type="module" src="/main.js"></script>"#))
                    }
                    for imported in body.matches(of: #/ from "\.(/[a-z]+\.js)";/#).map({ String($0.output.1) }) {
                        #expect(paths.contains(imported), "\(path) imports \(imported), which is not served")
                    }
                }
            }
        }
    }

    /// The service worker keeps every file of the page for offline use, and the manifest and icon.
    @Test func theServiceWorkerKeepsEveryFileOfThePage() {
        for path in WebPage.paths + ["/manifest.webmanifest", "/icon.svg"] {
            #expect(WebAssets.serviceWorker.contains("\"\(path)\""), "\(path) is not in the worker's list")
        }
    }
}
