// The page touchbridge serves: the phone's browser becomes the touch surface, a keyboard's special keys
// and a presentation remote. Its files are web/'s (index.html, page.css and one JavaScript module per job;
// see docs/architecture.md), embedded at build time: Plugins/PageEmbed runs page-embed, which makes
// `WebPage.files` of them. The binary serves the page with no file beside it (no CDN, works offline).
// `WebAssets` serves its manifest, icon and service worker.
import Hummingbird
import NIOCore

enum WebPage {
    /// One of the page's files: where it is served and its text.
    struct File: Sendable {
        /// `/` for index.html, `/NAME` for every other file of web/.
        let path: String
        let text: String

        var contentType: String { WebPage.contentType(of: path) }
    }

    /// The `Content-Type` of the page's file at `path`, by its extension (`/` is the page itself).
    static func contentType(of path: String) -> String {
        if path == "/" || path.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if path.hasSuffix(".css") { return "text/css; charset=utf-8" }
        // Module scripts are refused unless served with a JavaScript type.
        if path.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        return "application/octet-stream"
    }

    /// The paths of the page's files: what a first load fetches, and what the service worker keeps.
    static var paths: [String] { files.map(\.path) }

    /// Serves each of the page's files at its path; never stored by the browser (`no-store`, as the page
    /// always was): a new daemon's page is the one the phone gets.
    static func addRoutes(to router: Router<WebRequestContext>) {
        for file in files {
            let headers: HTTPFields = [.contentType: file.contentType, .cacheControl: "no-store"]
            // Made once: every answer shares these bytes (a buffer is copied only when written to), so
            // answers that wait for a peer that does not read hold no copy of their own.
            let body = ByteBuffer(string: file.text)
            router.get(RouterPath(file.path)) { _, _ in
                Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
            }
        }
    }
}
