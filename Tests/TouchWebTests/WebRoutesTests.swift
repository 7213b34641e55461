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
}
