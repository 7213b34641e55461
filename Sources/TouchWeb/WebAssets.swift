// What makes the page an installable app, and the page's question "why was I refused?":
// the web app manifest, its icon, the service worker (over HTTPS only: browsers allow one on a secure
// origin only, and over plain HTTP it would only ever be refused; it keeps the page's files, `WebPage.paths`),
// and `/pairing`. All embedded.
import Hummingbird
import NIOCore
import TouchCore

enum WebAssets {
    /// The page's colours: the manifest's `theme_color` and `background_color` are the page's background.
    static let themeColour = "#15171c"

    static let manifest = """
    {
      "name": "touchbridge",
      "short_name": "touchbridge",
      "description": "Your phone as the touchpad, touchscreen and presentation remote of your desktop.",
      "start_url": "/",
      "scope": "/",
      "display": "standalone",
      "orientation": "any",
      "background_color": "\(themeColour)",
      "theme_color": "\(themeColour)",
      "icons": [
        {"src": "/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
        {"src": "/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "maskable"}
      ]
    }

    """

    /// A rounded pad with a fingertip and a click: legible from 48 px up; its content stays inside the
    /// maskable safe zone (the central 80 %).
    static let icon = """
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512" width="512" height="512">
    <rect width="512" height="512" fill="#15171c"/>
    <rect x="116" y="86" width="280" height="340" rx="40" fill="#20232a" stroke="#3d6fe0" stroke-width="16"/>
    <line x1="256" y1="330" x2="256" y2="410" stroke="#3d6fe0" stroke-width="12"/>
    <circle cx="256" cy="210" r="52" fill="#3d6fe0"/>
    <circle cx="256" cy="210" r="84" fill="none" stroke="#3d6fe0" stroke-width="10" opacity=".5"/>
    </svg>

    """

    /// The cache's name carries a version: a new daemon's page replaces the old one's.
    static let cacheName = "touchbridge-1"

    /// What the service worker keeps for offline use: every file of the page, its manifest and its icon.
    static let offlinePaths = WebPage.paths + ["/manifest.webmanifest", "/icon.svg"]

    /// Network first (a daemon that is up serves its own page), the cached copy when it is not, so the
    /// app opens offline and says it cannot connect. The WebSocket is never intercepted.
    static let serviceWorker = """
    "use strict";
    const CACHE = "\(cacheName)";
    const FILES = [\(offlinePaths.map { "\"\($0)\"" }.joined(separator: ", "))];
    self.addEventListener("install", e => {
      e.waitUntil(caches.open(CACHE).then(c => c.addAll(FILES)).then(() => self.skipWaiting()));
    });
    self.addEventListener("activate", e => {
      e.waitUntil(caches.keys()
        .then(keys => Promise.all(keys.filter(k => k !== CACHE).map(k => caches.delete(k))))
        .then(() => self.clients.claim()));
    });
    self.addEventListener("fetch", e => {
      const url = new URL(e.request.url);
      if (e.request.method !== "GET" || url.origin !== location.origin || !FILES.includes(url.pathname)) return;
      e.respondWith(fetch(e.request).then(r => {
        if (r.ok) { const copy = r.clone(); caches.open(CACHE).then(c => c.put(url.pathname, copy)); }
        return r;
      }).catch(() => caches.match(url.pathname)));
    });

    """

    /// The page's refusal reasons, as `/pairing?k=SECRET` answers them (the WebSocket API shows no
    /// status of a refused upgrade, so the page asks after one).
    enum Refusal: String {
        /// 200: the secret is right (the refusal was something passing).
        case none = "ok"
        /// 403: the secret is wrong or missing. It counts as a wrong attempt, as on the WebSocket, so
        /// this is no way around the attempt limit.
        case wrongSecret = "wrong secret"
        /// 429: a wrong secret, after more than 5 from this address in the last minute (the right one
        /// is never refused).
        case tooManyTries = "too many tries"

        var status: HTTPResponse.Status {
            switch self {
            case .none: return .ok
            case .wrongSecret: return .forbidden
            case .tooManyTries: return .tooManyRequests
            }
        }
    }

    /// Why `source` presenting `given` is (or would be) refused, by the same count as the WebSocket's.
    static func refusal(given: Substring, source: SourceAddress?, secret: PairingSecret, attempts: PairingAttempts,
                        now: NIODeadline) -> Refusal {
        guard let source else { return .wrongSecret }
        switch attempts.check(given, secret: secret, from: HostKey(source), now: now) {
        case .paired: return .none
        case .wrongSecret: return .wrongSecret
        case .tooManyTries: return .tooManyTries
        }
    }

    /// Adds the routes next to the page's: `/manifest.webmanifest`, `/icon.svg`, `/sw.js` (HTTPS only:
    /// 404 over HTTP) and `/pairing`.
    /// `/pairing` counts its wrong secrets in `attempts`, owned by `loop` (the server's): it hops there.
    static func addRoutes(to router: Router<WebRequestContext>, tls: Bool, secret: PairingSecret,
                          attempts: NIOLoopBoundBox<PairingAttempts>, loop: any EventLoop) {
        router.get("/manifest.webmanifest") { _, _ in
            Self.response(manifest, type: "application/manifest+json")
        }
        router.get("/icon.svg") { _, _ in
            Self.response(icon, type: "image/svg+xml")
        }
        router.get("/sw.js") { _, _ in
            guard tls else { return Response(status: .notFound) }
            return Self.response(serviceWorker, type: "text/javascript; charset=utf-8")
        }
        router.get("/pairing") { request, context in
            let given = request.uri.queryParameters["k"] ?? ""
            let source = context.remoteAddress.flatMap { SourceAddress($0) }
            let reason = try await loop.submit {
                Self.refusal(given: given, source: source, secret: secret, attempts: attempts.value, now: loop.now)
            }.get()
            return Response(status: reason.status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: reason.rawValue + "\n")))
        }
    }

    private static func response(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
