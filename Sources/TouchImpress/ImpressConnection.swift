// LibreOffice Impress's remote-control protocol, as its client: bytes in, events out, commands out as bytes.
// No socket inside (sans-IO, as h11's Connection): the daemon's client feeds what it reads and writes what
// this hands back; the tests and the fuzz target feed bytes straight.
//
// Facts about the server (LibreOffice's sd/source/ui/remotecontrol, seen on Debian 12's LibreOffice 7.4):
// - A message is lines ended by "\n", the message by an empty line. The first line names it.
// - The client pairs first: `LO_SERVER_CLIENT_PAIR`, its name, its PIN. The server answers
//   `LO_SERVER_SERVER_PAIRED` when the profile's `AuthorisedRemotes` holds that name and PIN (or once the
//   user typed the PIN into the dialog), else `LO_SERVER_VALIDATING_PIN` while the dialog waits.
//   Once paired: `LO_SERVER_INFO` (its version), then `slideshow_started` (count, current) with
//   `slideshow_info` (the title) when a show runs, else `slideshow_finished`.
// - Slide numbers count from 0. A `goto_slide` to the current slide answers nothing; past the last slide
//   `transition_next` shows a black end screen and sends nothing.
// - `slide_preview` is a PNG (320 x 240 at most) in base64 on one line, without line breaks; previews of
//   every slide come after a show starts, and may come twice.
// - After `slideshow_started` (the show started, or was running when the client paired) the server sends a
//   burst: a `slide_preview` and a `slide_notes` for every slide. A `transition_next`, `transition_previous` or
//   `goto_slide` that arrives before the burst's end is lost (no answer, the slide stays); one sent after
//   the last slide's notes was taken every time on an idle machine; on a loaded one the burst's end and
//   the show's readiness come in either order, close together. So a command asked for while the show
//   settles is held (`send`), and written `settleQuiet` after the last slide's notes, at once when a
//   `slide_updated` comes (the show acts), or once `settleLimit` passed without the burst's end.
// - `slide_notes` is the notes page's text as HTML on one line: "<html><body>" + text + "</body></html>",
//   each newline made "<br/>". The text itself is not escaped: a "<" or "&" in the notes comes as it is.
import TouchCore

/// What Impress said, decoded and checked.
public enum ImpressEvent: Equatable, Sendable {
    /// Paired: from now on the server sends the show and takes commands.
    case paired
    /// The server shows its PIN dialog and waits for the user to type the PIN there.
    case waitingForPin
    /// The server's version (`LO_SERVER_INFO`), printable ASCII.
    case serverVersion(String)
    /// A show runs: `count` slides, slide `current` (from 0) shown.
    case slideshowStarted(count: Int, current: Int)
    /// The show's title (`slideshow_info`), as plain text.
    case slideshowTitle(String)
    /// Slide `current` (from 0) is shown now.
    case slideUpdated(current: Int)
    /// No show runs (it ended, or none ran when the client paired).
    case slideshowFinished
    /// Slide `slide`'s picture, a PNG (its bytes, decoded).
    case slidePreview(slide: Int, png: [UInt8])
    /// Slide `slide`'s notes as plain text (never markup): lines by "\n", no other control character.
    case slideNotes(slide: Int, text: String)
}

/// Why a message from the server was refused. Each is counted and logged at most once per interval
/// (the `DropLog` model); the raw values are the log's reason indices.
public enum ImpressRefusal: Int, CaseIterable, Sendable {
    /// A message longer than `ImpressConnection.maxMessageBytes`: discarded up to its end.
    case messageTooLong
    /// A preview whose PNG would be larger than `ImpressConnection.maxPreviewBytes`.
    case previewTooLarge
    /// Notes longer than `ImpressConnection.maxNotesBytes`.
    case notesTooLong
    /// A preview that is not base64, or not a PNG once decoded.
    case badPreview
    /// A slide number or count that is not a decimal number in range.
    case badNumber
    /// A message of a name this client does not know.
    case unknownMessage
    /// A known message with the wrong number of lines, or text that is not UTF-8.
    case malformed
    /// A show's message before pairing, or pairing's after it.
    case outOfOrder

    /// The reason as a log line says it.
    public var words: String {
        switch self {
        case .messageTooLong: "a message longer than 8 MiB"
        case .previewTooLarge: "a slide preview larger than 4 MiB"
        case .notesTooLong: "slide notes longer than 64 KiB"
        case .badPreview: "a slide preview that is not a PNG in base64"
        case .badNumber: "a slide number that is not a number in range"
        case .unknownMessage: "a message of an unknown name"
        case .malformed: "a malformed message"
        case .outOfOrder: "a message out of order"
        }
    }
}

/// A command to Impress.
public enum ImpressCommand: Equatable, Sendable {
    case presentationStart
    case presentationStop
    case transitionNext
    case transitionPrevious
    /// Show slide `n` (from 0).
    case gotoSlide(Int)

    /// The command as the server reads it: its lines, then an empty line.
    public var bytes: [UInt8] {
        switch self {
        case .presentationStart: Array("presentation_start\n\n".utf8)
        case .presentationStop: Array("presentation_stop\n\n".utf8)
        case .transitionNext: Array("transition_next\n\n".utf8)
        case .transitionPrevious: Array("transition_previous\n\n".utf8)
        case .gotoSlide(let n): Array("goto_slide\n\(n)\n\n".utf8)
        }
    }
}

/// The client's side of one connection to Impress's remote server. Feed it what the socket reads
/// (`receive`), write what `pairRequest` and `command` return. Bounded: it keeps at most one message
/// (`maxMessageBytes`) and the show's count and slide; it never traps on what it reads.
public struct ImpressConnection: Sendable {
    /// The name touchbridge pairs as (the `AuthorisedRemotes` entry's name).
    public static let clientName = "touchbridge"
    /// The longest message kept; a longer one is discarded to its end and refused once.
    public static let maxMessageBytes = 8 << 20
    /// The largest preview, decoded.
    public static let maxPreviewBytes = 4 << 20
    /// The longest notes, as they come (HTML).
    public static let maxNotesBytes = 64 << 10
    /// The longest message before pairing: Impress's pairing answers are a line. A server that says more
    /// before it pairs is not Impress.
    public static let maxUnpairedMessageBytes = 1024
    /// The most slides a show may have (a count beyond is a bad number).
    public static let maxSlides = 100_000
    /// The longest title or version kept, in bytes (longer ones are cut at a character).
    public static let maxTitleBytes = 256
    /// A buffer kept across messages up to this size; a larger one is given back once its message is read.
    static let keptCapacity = 64 << 10
    /// The longest a command is held after `slideshow_started` when the burst's end never comes (a slide
    /// whose notes Impress does not send): 3 s and 200 ms a slide (the burst takes about 60 ms a slide on
    /// an idle machine, several times that on a loaded one), at most 15 s.
    public static func settleLimit(slides: Int) -> Interval {
        .milliseconds(min(15_000, 3_000 + 200 * UInt64(max(0, min(slides, maxSlides)))))
    }
    /// How long after the burst's end held commands wait: the show's readiness comes close to it, in either
    /// order on a loaded machine.
    public static let settleQuiet = Interval.milliseconds(300)
    /// The most commands held at once (a user pressing Next while a show starts presses it a few times).
    public static let maxHeld = 8

    /// Where the pairing stands.
    public enum State: Equatable, Sendable {
        /// The pair request is sent (or to be sent); no answer yet.
        case pairing
        /// Impress shows its PIN dialog.
        case waitingForPin
        /// Paired: the show's messages come, commands go.
        case paired
        /// The server answered something that is not Impress's pairing: the connection is to be closed;
        /// nothing more is read.
        case notImpress
    }

    /// What `receive` hands out: an event, or a refused message (with the log line's counts when one is
    /// due now).
    public enum Output: Equatable, Sendable {
        case event(ImpressEvent)
        case refused(ImpressRefusal, DropLog<8>.Report?)
        /// The server is not Impress (its first message was not a pairing answer): close the socket.
        case notImpress
        /// Commands held while the show settled (`send`), to be written now, in the order asked.
        case write([UInt8])
    }

    /// What `send` did with a command.
    public enum Sending: Equatable, Sendable {
        /// Write these bytes now.
        case write([UInt8])
        /// Held while the show that just started settles: `receive` or `tick` hands it out as `.write`, at
        /// the latest at `settleDeadline`.
        case held
        /// It cannot go: not paired, a slide outside the show (or the current one), or `maxHeld` already held.
        case refused
    }

    public private(set) var state: State = .pairing
    /// The running show's slide count and current slide, while one runs.
    public private(set) var show: (count: Int, current: Int)? = nil
    /// The refusals, counted; reports bounded per reason in time.
    public private(set) var refusals = DropLog<8>()

    private let pin: ImpressPIN
    /// The message being read: its bytes so far (each line with its "\n").
    private var message: [UInt8] = []
    /// The last byte read ended a line (or nothing was read yet).
    private var atLineStart = true
    /// The message being read is too long: its bytes are dropped up to its end.
    private var discarding = false
    /// While the show settles (from `slideshow_started` to `settleQuiet` after the burst's end): when it
    /// began, and when the burst ended (nil before).
    private var settlingSince: Instant? = nil
    private var burstEnded: Instant? = nil
    /// The commands asked for while the show settled, as bytes to write, in order.
    private var held: [UInt8] = []
    private var heldCount = 0

    /// When the commands held now are written (nil: none is held).
    public var settleDeadline: Instant? {
        guard heldCount > 0 else { return nil }
        return settlesAt
    }

    /// When the show counts as settled: `settleQuiet` after the burst's end, or `settleLimit` after it began.
    private var settlesAt: Instant? {
        guard let settlingSince else { return nil }
        if let burstEnded { return burstEnded + Self.settleQuiet }
        return settlingSince + Self.settleLimit(slides: show?.count ?? 0)
    }

    public init(pin: ImpressPIN) {
        self.pin = pin
    }

    /// The pair request, the first thing the client writes.
    public var pairRequest: [UInt8] {
        Array("LO_SERVER_CLIENT_PAIR\n\(Self.clientName)\n\(pin.digits)\n\n".utf8)
    }

    /// `command` as bytes to write, or nil when it cannot go now: not paired, or a `gotoSlide` outside the
    /// running show's slides (Impress answers a `goto_slide` to the current slide with nothing, so that one
    /// is left out too).
    public func command(_ command: ImpressCommand) -> [UInt8]? {
        guard state == .paired else { return nil }
        if case .gotoSlide(let n) = command {
            guard let show, n >= 0, n < show.count, n != show.current else { return nil }
        }
        return command.bytes
    }

    /// `command` to write now, held while the show settles, or refused (see `command(_:)`).
    public mutating func send(_ command: ImpressCommand, at now: Instant) -> Sending {
        guard let bytes = self.command(command) else { return .refused }
        guard let settlesAt, now < settlesAt else {
            settlingSince = nil
            burstEnded = nil
            return .write(bytes)
        }
        guard heldCount < Self.maxHeld else { return .refused }
        held += bytes
        heldCount += 1
        return .held
    }

    /// The time passed: past `settleDeadline`, what is held is handed out as `.write`.
    public mutating func tick(at now: Instant, into outputs: inout [Output]) {
        guard let deadline = settleDeadline, now >= deadline else { return }
        settled(into: &outputs)
    }

    /// The show settled: what is held goes out.
    private mutating func settled(into outputs: inout [Output]) {
        settlingSince = nil
        burstEnded = nil
        guard heldCount > 0 else { return }
        outputs.append(.write(held))
        held = []
        heldCount = 0
    }

    /// Reads `bytes` (what the socket gave, in any cut), appending what they complete to `outputs`.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Instant, into outputs: inout [Output]) {
        guard state != .notImpress else { return }
        let limit = state == .paired ? Self.maxMessageBytes : Self.maxUnpairedMessageBytes
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if atLineStart {
                    // An empty line: the message ends (an empty line with no message before it is nothing).
                    if discarding {
                        discarding = false
                    } else if !message.isEmpty {
                        handleMessage(at: now, into: &outputs)
                        if state == .notImpress { return }
                    }
                    message.removeAll(keepingCapacity: message.capacity <= Self.keptCapacity)
                    continue
                }
                atLineStart = true
            } else {
                atLineStart = false
            }
            guard !discarding else { continue }
            guard message.count < limit else {
                if state != .paired {
                    notImpress(into: &outputs)
                    return
                }
                refuse(.messageTooLong, at: now, into: &outputs)
                discarding = true
                message = []
                continue
            }
            message.append(byte)
        }
    }

    private mutating func notImpress(into outputs: inout [Output]) {
        state = .notImpress
        show = nil
        message = []
        settlingSince = nil
        burstEnded = nil
        held = []
        heldCount = 0
        outputs.append(.notImpress)
    }

    private mutating func refuse(_ reason: ImpressRefusal, at now: Instant, into outputs: inout [Output]) {
        outputs.append(.refused(reason, refusals.record(reasonIndex: reason.rawValue, at: now)))
    }

    /// The message in `message`: its lines (without their "\n"), the first its name.
    private mutating func handleMessage(at now: Instant, into outputs: inout [Output]) {
        var lines = message.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // The message's last byte is a "\n", which leaves an empty piece behind it.
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard let name = lines.first else { return }
        let fields = lines.dropFirst()
        let nameText = String(decoding: name, as: UTF8.self)

        if state != .paired {
            switch nameText {
            case "LO_SERVER_SERVER_PAIRED" where fields.isEmpty:
                state = .paired
                outputs.append(.event(.paired))
            case "LO_SERVER_VALIDATING_PIN" where fields.isEmpty:
                state = .waitingForPin
                outputs.append(.event(.waitingForPin))
            default:
                notImpress(into: &outputs)
            }
            return
        }

        switch nameText {
        case "LO_SERVER_SERVER_PAIRED", "LO_SERVER_VALIDATING_PIN":
            refuse(.outOfOrder, at: now, into: &outputs)
        case "LO_SERVER_INFO":
            guard fields.count == 1 else { return refuse(.malformed, at: now, into: &outputs) }
            let version = fields.first!.prefix(Self.maxTitleBytes).filter { $0 >= 0x20 && $0 < 0x7F }
            outputs.append(.event(.serverVersion(String(decoding: version, as: UTF8.self))))
        case "slideshow_started":
            guard fields.count == 2 else { return refuse(.malformed, at: now, into: &outputs) }
            guard let count = Self.number(fields[fields.startIndex]), let current = Self.number(fields[fields.startIndex + 1]),
                  count >= 1, count <= Self.maxSlides, current < count
            else { return refuse(.badNumber, at: now, into: &outputs) }
            show = (count, current)
            outputs.append(.event(.slideshowStarted(count: count, current: current)))
            settlingSince = now
            burstEnded = nil
        case "slideshow_info":
            guard fields.count == 1 else { return refuse(.malformed, at: now, into: &outputs) }
            guard let title = String(validating: fields.first!, as: UTF8.self) else { return refuse(.malformed, at: now, into: &outputs) }
            outputs.append(.event(.slideshowTitle(NotesText.oneLine(title, maxBytes: Self.maxTitleBytes))))
        case "slide_updated":
            guard fields.count == 1 else { return refuse(.malformed, at: now, into: &outputs) }
            guard let current = slideNumber(fields.first!) else { return refuse(.badNumber, at: now, into: &outputs) }
            show?.current = current
            outputs.append(.event(.slideUpdated(current: current)))
            settled(into: &outputs)
        case "slideshow_finished":
            guard fields.isEmpty else { return refuse(.malformed, at: now, into: &outputs) }
            show = nil
            outputs.append(.event(.slideshowFinished))
            settled(into: &outputs)
        case "slide_preview":
            guard fields.count == 2 else { return refuse(.malformed, at: now, into: &outputs) }
            guard let slide = slideNumber(fields[fields.startIndex]) else { return refuse(.badNumber, at: now, into: &outputs) }
            let encoded = fields[fields.startIndex + 1]
            guard Base64.decodedLength(encoded.count) <= Self.maxPreviewBytes else { return refuse(.previewTooLarge, at: now, into: &outputs) }
            guard let png = Base64.decode(encoded), png.starts(with: Self.pngSignature) else { return refuse(.badPreview, at: now, into: &outputs) }
            outputs.append(.event(.slidePreview(slide: slide, png: png)))
        case "slide_notes":
            guard fields.count == 2 else { return refuse(.malformed, at: now, into: &outputs) }
            guard let slide = slideNumber(fields[fields.startIndex]) else { return refuse(.badNumber, at: now, into: &outputs) }
            let html = fields[fields.startIndex + 1]
            guard html.count <= Self.maxNotesBytes else { return refuse(.notesTooLong, at: now, into: &outputs) }
            guard let htmlText = String(validating: html, as: UTF8.self) else { return refuse(.malformed, at: now, into: &outputs) }
            outputs.append(.event(.slideNotes(slide: slide, text: NotesText.plain(fromHTML: htmlText))))
            // The last slide's notes end the burst that follows `slideshow_started`.
            if let show, slide == show.count - 1, settlingSince != nil, burstEnded == nil { burstEnded = now }
        default:
            refuse(.unknownMessage, at: now, into: &outputs)
        }
    }

    /// The first eight bytes of every PNG.
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A slide number of the running show (or, with none known, below `maxSlides`).
    private func slideNumber(_ field: ArraySlice<UInt8>) -> Int? {
        guard let n = Self.number(field), n < (show?.count ?? Self.maxSlides) else { return nil }
        return n
    }

    /// A decimal number of 1–6 ASCII digits (nothing else: no sign, no space).
    static func number(_ field: ArraySlice<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 6 else { return nil }
        var n = 0
        for b in field {
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
            n = n * 10 + Int(b - UInt8(ascii: "0"))
        }
        return n
    }
}
