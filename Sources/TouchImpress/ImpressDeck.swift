// What the page's presenter panel is told of Impress: the show, the current and the next slide's
// pictures, the current slide's notes. Pure: events in, the page's lines out.

/// The show as Impress last told it, and the lines that tell the page. Impress sends every slide's
/// preview and notes once, soon after the show starts (one slide per 50 ms), and only the slide's number
/// when it changes: so they are kept here, bounded in all (`maxKeptPreviewBytes`, `maxKeptNotesBytes`;
/// what comes past the bound is sent if it is the current or next slide's, and not kept).
///
/// The page's lines (text WebSocket messages, docs/wire-format.md):
/// `impress off` (no Impress: the panel's buttons are keys), `impress pin NNNN` (Impress shows its dialog and
/// waits for this PIN), `impress on` (paired, no show), `impress show M N` (a show of M slides, slide N shown,
/// from 0), `impress preview N BASE64` (slide N's PNG), `impress notes N TEXT` (slide N's notes, plain text,
/// lines by "\n"), `impress title TEXT`.
public struct ImpressDeck: Sendable {
    /// The most bytes of previews kept (PNG bytes).
    public static let maxKeptPreviewBytes = 16 << 20
    /// The most bytes of notes kept (UTF-8).
    public static let maxKeptNotesBytes = 4 << 20

    /// Where the connection stands, as the page sees it.
    public enum Link: Equatable, Sendable {
        case off
        case waitingForPin
        case on
    }

    public private(set) var link: Link = .off
    /// The running show's slide count and current slide.
    public private(set) var show: (count: Int, current: Int)? = nil
    public private(set) var title: String? = nil
    private var previews: [Int: [UInt8]] = [:]
    private var notes: [Int: String] = [:]
    public private(set) var keptPreviewBytes = 0
    public private(set) var keptNotesBytes = 0
    private let pin: ImpressPIN

    public init(pin: ImpressPIN) {
        self.pin = pin
    }

    /// The connection closed (or never was): everything is forgotten.
    public mutating func disconnected(into lines: inout [String]) {
        let was = link
        forgetShow()
        link = .off
        if was != .off { lines.append("impress off") }
    }

    /// One event from the connection.
    public mutating func apply(_ event: ImpressEvent, into lines: inout [String]) {
        switch event {
        case .paired:
            link = .on
            lines.append("impress on")
        case .waitingForPin:
            link = .waitingForPin
            lines.append("impress pin \(pin.digits)")
        case .serverVersion:
            break
        case .slideshowStarted(let count, let current):
            forgetShow()
            show = (count, current)
            lines.append("impress show \(count) \(current)")
        case .slideshowTitle(let text):
            title = text
            lines.append("impress title \(text)")
        case .slideUpdated(let current):
            guard let count = show?.count else { return }
            show = (count, current)
            lines.append("impress show \(count) \(current)")
            appendSlide(current, into: &lines)
        case .slideshowFinished:
            forgetShow()
            lines.append("impress on")
        case .slidePreview(let slide, let png):
            if previews[slide] == png { return }  // Impress may send a preview twice
            if let old = previews.removeValue(forKey: slide) { keptPreviewBytes -= old.count }
            if keptPreviewBytes + png.count <= Self.maxKeptPreviewBytes {
                previews[slide] = png
                keptPreviewBytes += png.count
            }
            if isShownSoon(slide) { lines.append(previewLine(slide, png)) }
        case .slideNotes(let slide, let text):
            if let old = notes.removeValue(forKey: slide) { keptNotesBytes -= old.utf8.count }
            if keptNotesBytes + text.utf8.count <= Self.maxKeptNotesBytes {
                notes[slide] = text
                keptNotesBytes += text.utf8.count
            }
            if slide == show?.current { lines.append("impress notes \(slide) \(text)") }
        }
    }

    /// Everything a page that comes now must be told (the page that takes the session).
    public func snapshot(into lines: inout [String]) {
        switch link {
        case .off: lines.append("impress off"); return
        case .waitingForPin: lines.append("impress pin \(pin.digits)"); return
        case .on: lines.append("impress on")
        }
        if let title { lines.append("impress title \(title)") }
        guard let show else { return }
        lines.append("impress show \(show.count) \(show.current)")
        appendSlide(show.current, into: &lines)
    }

    /// The current slide's and the next one's pictures and the current one's notes, as far as kept.
    private func appendSlide(_ current: Int, into lines: inout [String]) {
        for slide in [current, current + 1] {
            if let png = previews[slide] { lines.append(previewLine(slide, png)) }
        }
        lines.append("impress notes \(current) \(notes[current] ?? "")")
    }

    private func isShownSoon(_ slide: Int) -> Bool {
        guard let current = show?.current else { return false }
        return slide == current || slide == current + 1
    }

    private func previewLine(_ slide: Int, _ png: [UInt8]) -> String {
        "impress preview \(slide) " + Base64.encode(png)
    }

    private mutating func forgetShow() {
        show = nil
        title = nil
        previews = [:]
        notes = [:]
        keptPreviewBytes = 0
        keptNotesBytes = 0
    }
}
