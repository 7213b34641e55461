// The page's routes with Hummingbird's testing module: live (a real server on 127.0.0.1, port 0) for
// what an allowed peer gets, in-process (`.router`, no socket, so no peer address) for what an unknown
// peer gets. The WebSocket upgrade and its gate are tested end to end (WebTouchpadTests, WebHardeningTests).
import Hummingbird
import HummingbirdTesting
import Testing
import TouchCore
@testable import TouchWeb

@Suite struct WebRoutesTests {
    static func app(_ allowList: AllowList) -> some ApplicationProtocol {
        Application(router: WebServer.router(allowList: allowList),
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test func anAllowedPeerGetsThePageAndTheHealthCheck() async throws {
        try await Self.app(.defaultPrivate).test(.live) { client in
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

    @Test func aPeerOutsideTheAllowListGetsNothing() async throws {
        let onlyTen = AllowList([CIDR(parsing: "10.0.0.0/8")!])
        try await Self.app(onlyTen).test(.live) { client in
            for uri in ["/", "/healthz"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .forbidden, "\(uri) for 127.0.0.1 outside 10.0.0.0/8")
                    #expect(!String(buffer: response.body).contains("<html"))
                }
            }
        }
    }

    @Test func aPeerWithNoAddressIsRefused() async throws {
        // In-process there is no socket, so no peer address: refused like an address outside --allow.
        try await Self.app(.defaultPrivate).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .forbidden)
            }
        }
    }
}
