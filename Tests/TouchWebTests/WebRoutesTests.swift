// The page's routes through the router's responder, in process: each request made here and answered by
// `WebServer.router()`'s responder, its body read by a writer of this file's (Hummingbird's testing module did
// the same, but it brings AsyncHTTPClient, and with it swift-nio-ssl and BoringSSL, into the test build). Who
// reaches them at all is decided once, at accept (`AdmittedChannel`: AdmissionTests, and end to end
// WebHardeningTests). The WebSocket upgrade and its gate are tested end to end (WebTouchpadTests,
// WebHardeningTests).
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Testing
import TouchCore
@testable import TouchWeb

@Suite struct WebRoutesTests {
    struct Answer {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
    }

    /// Collects a response's body.
    final class Collector: ResponseBodyWriter {
        var body = ByteBuffer()
        func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            body.writeBuffer(&buffer)
        }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    /// A GET of `path`, answered by the page's router.
    static func get(_ path: String) async throws -> Answer {
        let responder = WebServer.router().buildResponder()
        let request = Request(head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: path),
                              body: RequestBody(buffer: ByteBuffer()))
        let context = WebRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(),
                                                                                logger: Logger(label: "WebRoutesTests")))
        let response = try await responder.respond(to: request, context: context)
        let collector = Collector()
        try await response.body.write(collector)
        return Answer(status: response.status, headers: response.headers, body: collector.body)
    }

    @Test func anAllowedPeerGetsThePageAndTheHealthCheck() async throws {
        var response = try await Self.get("/")
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "text/html; charset=utf-8")
        #expect(response.headers[.cacheControl] == "no-store")
        #expect(String(buffer: response.body).contains("<html"))
        response = try await Self.get("/healthz")
        #expect(response.status == .ok)
        #expect(String(buffer: response.body) == "ok\n")
        response = try await Self.get("/ws")
        #expect(response.status == .forbidden, "a GET of /ws without an upgrade is refused")
        response = try await Self.get("/nothing-here")
        #expect(response.status == .notFound)
    }

    /// Each of the page's files (web/, embedded at build time) at its path, with its type and the page's
    /// caching; index.html at `/` loads the stylesheet and the first module, and every module it imports
    /// is served.
    @Test func thePagesFilesAreServedWithTheirTypes() async throws {
        let paths = WebPage.paths
        #expect(paths.contains("/") && paths.contains("/page.css") && paths.contains("/main.js"), "\(paths)")
        #expect(Set(paths).count == paths.count, "a path served twice: \(paths)")
        for path in paths {
            let response = try await Self.get(path)
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

    /// The service worker keeps every file of the page for offline use, and the manifest and icon.
    @Test func theServiceWorkerKeepsEveryFileOfThePage() {
        for path in WebPage.paths + ["/manifest.webmanifest", "/icon.svg"] {
            #expect(WebAssets.serviceWorker.contains("\"\(path)\""), "\(path) is not in the worker's list")
        }
    }
}
