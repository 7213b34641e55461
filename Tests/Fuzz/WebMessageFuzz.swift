// libFuzzer target: the web page's WebSocket messages (`WebMessage.classify`: a PoseAI packet or a
// text command) and the core behind them, and a page's socket read by the one WebSocket reader
// (`WebSocketReader`, which both the plain and the TLS path drive; `WebSocketWire.parse` under it): the
// same bytes read as frames. Built by scripts/fuzz.sh with `swiftc -sanitize=fuzzer,address`; not part
// of the SwiftPM package.
//
// For the framing: parsing never traps; a whole frame lies within the bytes, its payload right behind
// its header and within the 64 KiB limit, a control frame whole and at most 125 bytes; every shorter cut
// of a whole frame is incomplete; unmasking twice gives the bytes back. For the reader: the bytes whole
// and the same bytes in pieces give the same messages, replies and end; a queue with room for only some
// messages pauses the reader, which holds one, and resuming and the socket's end give the rest, none
// lost, none twice, in order; its buffer never holds more than its capacity.
// For every input as a message: classifying never traps; a reused decoder and a fresh one classify alike; a refused
// packet leaves the decoder's packet unchanged; a packet has slots 0...9 and coordinates 0...4095; a
// command is valid UTF-8 and within its bounds (surface 10...10,000 each way, text 1...256 characters,
// an edit 0...256 backspaces and 0...256 characters, not both none, no control character but Tab); an edit
// through the Bridge is its BackSpace taps then one `type` per scalar, and the page gone after it leaves no
// key held and no keycode borrowed; a view request is refused or clamped, and the page gone mid-frame leaves
// nothing asked and no capture after; and after the core handles a packet and releases everything, no button is held, every move on screen.
import TouchCore
import TouchWire

// libFuzzer calls the entry point from one thread, one input at a time: the state below is never
// touched concurrently, which is why the unchecked `nonisolated(unsafe)` is sound here.
nonisolated(unsafe) private var reused = PoseAIDecoder()
nonisolated(unsafe) private var actions: [OutputAction] = []


@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    checkFraming(bytes)
    checkReader(bytes)
    // WebInput drops larger messages before classifying them.
    guard size <= PoseAIDecoder.maxPacketBytes else { return 0 }
    let before = reused.packet.events
    let kind = WebMessage.classify(bytes, decoder: &reused)
    var fresh = PoseAIDecoder()
    precondition(WebMessage.classify(bytes, decoder: &fresh) == kind, "a reused decoder and a fresh one disagree")

    switch kind {
    case .undecodablePacket:
        precondition(size > 0 && bytes[0] == UInt8(ascii: "{"))
        precondition(reused.packet.events == before, "a refused packet changed the decoder's packet")
    case .notACommand:
        precondition(size == 0 || bytes[0] != UInt8(ascii: "{"))
    case .command(let command):
        precondition(String(validating: bytes, as: UTF8.self) != nil, "a command from invalid UTF-8")
        switch command {
        case .surface(let w, let h):
            precondition((10...10_000).contains(w) && (10...10_000).contains(h), "surface out of bounds")
        case .text(let text):
            precondition(!text.isEmpty && text.unicodeScalars.count <= 256, "text out of bounds")
        case .edit(let backspaces, let text):
            precondition((0...WebCommand.maxEditBackspaces).contains(backspaces) && text.unicodeScalars.count <= WebCommand.maxEditScalars
                         && (backspaces > 0 || !text.isEmpty), "edit out of bounds")
            precondition(!text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }, "edit with a control character")
            checkEditLeavesNothing(command, backspaces: backspaces, text: text)
        case .click(let b, let modifiers):
            precondition((1...3).contains(b.rawValue), "click of another button")
            precondition(modifiers.count <= KeyChord.maxKeys, "too many modifiers")
        case .key(let chord):
            precondition(chord.count >= 1 && chord.count <= KeyChord.maxKeys, "key of no chord")
        case .tune(let tuning):
            switch tuning {
            case .speed(let v): precondition((-1...1).contains(v), "speed out of bounds")
            case .scrollSpeed(let v): precondition((0.1...10).contains(v), "scroll speed out of bounds")
            case .naturalScroll, .tapToClick: break
            }
        case .ping(let n):
            precondition(n < 1 << 53, "ping beyond 2^53")
        case .pen(let report):
            if case .near(let p) = report {
                precondition((0...1).contains(p.x) && (0...1).contains(p.y) && (0...1).contains(p.pressure), "pen point or pressure out of bounds")
                precondition((-90...90).contains(p.tiltX) && (-90...90).contains(p.tiltY) && (0...360).contains(p.twist), "pen tilt or twist out of bounds")
            }
        case .gotoSlide(let n):
            precondition(n >= 0 && n < WebCommand.maxSlide, "goto slide out of bounds")
        case .mode, .release, .presenter:
            break  // typed: a mode the parser returns is one of TouchMode's
        case .view(let request):
            checkViewLeavesNothing(request)
        }
    case .packet:
        checkEventsInRange(reused.packet.events)
        var core = TouchPipeline(configuration: .init(screen: fuzzScreen))
        actions.removeAll(keepingCapacity: true)
        core.handle(reused.packet, at: Instant(nanoseconds: 1_000_000_000), into: &actions)
        checkNothingHeldAfterReleaseAll(&core, actions: &actions)
    }
    return 0
}

/// A view request through a `ViewMachine` held by the page: the size the parser let through (9 digits
/// each way) is refused or clamped within 16...1920 a side with at most one capture; the page gone
/// mid-frame (asked, damage pending) leaves nothing asked, nothing viewed, and no capture after.
func checkViewLeavesNothing(_ request: ViewRequest) {
    let page = Sender(SourceAddress(ipv4: 0x7f00_0001, port: 5000), via: .web)
    var view = ViewMachine(enabled: true, available: true)
    _ = view.holderChanged(to: page)
    var changed = false
    let first = view.request(request, from: page, at: Instant(nanoseconds: 1_000_000), viewingChanged: &changed)
    switch (request, first) {
    case (.off, .none):
        break
    case (.next(let w, let h), .refuse(.badSize)):
        precondition(w < 1 || h < 1, "a size refused that was not 0 or less")
    case (.next(let w, let h), .capture(let size)):
        precondition(w >= 1 && h >= 1, "a picture for a size of 0 or less")
        precondition((ViewMachine.minSide...ViewMachine.maxLongSide).contains(size.width)
                     && (ViewMachine.minSide...ViewMachine.maxLongSide).contains(size.height), "a picture out of bounds")
        let fitted = ViewMachine.fit(size, shape: PixelRect(x: 0, y: 0, width: 1920, height: 1080))
        precondition(fitted.width >= 1 && fitted.height >= 1 && fitted.width <= size.width && fitted.height <= size.height, "a fitted picture out of its box")
        // Asked again, the screen changed: the page leaves before the frame is captured.
        _ = view.request(request, from: page, at: Instant(nanoseconds: 2_000_000), viewingChanged: &changed)
        precondition(view.holderChanged(to: nil), "the page's view did not stop when it left")
        precondition(view.asked == nil && !view.viewing, "the page gone left something asked or viewed")
        precondition(view.damage(at: Instant(nanoseconds: 3_000_000)) == .none, "a capture for a page gone")
    default:
        preconditionFailure("an unexpected answer \(first) to \(request)")
    }
}

/// An edit through a Bridge: BackSpace taps then one `type` per scalar, and when the page goes, nothing
/// held and no keycode borrowed.
func checkEditLeavesNothing(_ command: WebCommand, backspaces: Int, text: String) {
    var bridge = Bridge(configuration: .init(screen: fuzzScreen))
    var effects = BridgeEffects()
    let page = SourceAddress(ipv4: 0x7f00_0001, port: 5000)
    bridge.start(screen: PixelRect(x: 0, y: 0, width: 1920, height: 1080), monitors: [], at: Instant(nanoseconds: 0), into: &effects)
    effects.clear()
    bridge.command(command, from: page, at: Instant(nanoseconds: 1_000_000), into: &effects)
    let scalars = text.unicodeScalars.count
    precondition(effects.actions.count == 2 * backspaces + scalars, "an edit's actions are not its taps and characters")
    for (i, action) in effects.actions.enumerated() {
        if i < 2 * backspaces {
            precondition(action == .key(.backSpace, pressed: i % 2 == 0), "an edit's backspaces are not taps")
        } else if case .type = action {
        } else {
            preconditionFailure("an edit typed something other than characters")
        }
    }
    effects.clear()
    bridge.sourceGone(page, at: Instant(nanoseconds: 2_000_000), into: &effects)
    precondition(!bridge.held.holdsInput && !bridge.held.typed, "an edit left something held or borrowed")
    precondition(scalars == 0 || effects.actions.contains(.restoreKeymap), "the borrowed keycode was not given back")
}

/// The bytes read as a plain page's frames, one after another, as `BridgeWebSocket` reads them.
func checkFraming(_ bytes: UnsafeRawBufferPointer) {
    let limit = 65_536
    var offset = 0
    while offset < bytes.count {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard case .frame(let header, let length) = WebSocketWire.parse(rest, maxPayload: limit) else { return }
        precondition(length <= rest.count && header.payloadOffset + header.payloadCount == length, "a frame outside the bytes")
        precondition(header.payloadOffset >= 2 && header.payloadOffset <= WebSocketWire.maxHeaderBytes, "a header of another length")
        precondition(header.payloadCount <= limit, "a payload over the limit")
        if header.opcode >= WebSocketWire.close {
            precondition(header.fin && header.payloadCount <= 125, "a fragmented or long control frame")
        } else {
            precondition(header.opcode <= WebSocketWire.binary, "a frame of an undefined opcode")
        }
        for cut in [0, 1, header.payloadOffset - 1, length - 1] where cut >= 0 && cut < length {
            precondition(WebSocketWire.parse(UnsafeRawBufferPointer(rebasing: rest[..<cut]), maxPayload: limit) == .incomplete,
                         "a cut of a whole frame is not incomplete")
        }
        if let mask = header.mask {
            let original = Array(rest[header.payloadOffset..<length])
            var payload = original
            payload.withUnsafeMutableBytes { WebSocketWire.unmask($0, with: mask); WebSocketWire.unmask($0, with: mask) }
            precondition(payload == original, "unmasking twice changed the payload")
        }
        offset += length
    }
}

/// What the reader's messages are in this target: their payloads (a fragment: nil).
struct Payloads: WebSocketMessages {
    mutating func read(_ payload: UnsafeRawBufferPointer, received: Instant) -> [UInt8]? { Array(payload) }
    mutating func fragment(received: Instant) -> [UInt8]? { nil }
}

/// The bytes read by the one reader: whole, then in pieces (their sizes from the bytes), then against a
/// queue with room for some messages only.
func checkReader(_ bytes: UnsafeRawBufferPointer) {
    let limit = 4096
    func read(pieces: Int, room: Int?) -> (messages: [[UInt8]?], written: [[UInt8]], end: WebSocketStop) {
        let reader = WebSocketReader(maxMessageBytes: limit, messages: Payloads())
        var messages: [[UInt8]?] = [], written: [[UInt8]] = []
        var left = room
        let offer: ([UInt8]?) -> Bool = { m in
            if let l = left { guard l > 0 else { return false }; left = l - 1 }
            messages.append(m)
            return true
        }
        var stop = WebSocketStop.needBytes
        var at = 0
        let size = max(1, bytes.count / pieces)
        while at < bytes.count, stop != .paused, case .needBytes = stop {
            let taken = reader.append(UnsafeRawBufferPointer(rebasing: bytes[at..<min(bytes.count, at + size)]))
            precondition(reader.unread <= reader.capacity, "the buffer past its capacity")
            at += taken
            stop = reader.run(received: Instant(nanoseconds: 0), offer: offer, write: { written.append($0) })
            if taken == 0, case .needBytes = stop { preconditionFailure("a full buffer with no whole frame") }
        }
        if stop == .paused {
            precondition(reader.held != nil, "paused with nothing held")
            // Room again: what is held first, then on; the rest of the bytes at the socket's end.
            left = nil
            stop = reader.resume(received: Instant(nanoseconds: 0), offer: offer, write: { written.append($0) })
            precondition(stop != .paused, "paused with room")
            while at < bytes.count, case .needBytes = stop {
                at += reader.append(UnsafeRawBufferPointer(rebasing: bytes[at...]))
                stop = reader.run(received: Instant(nanoseconds: 0), offer: offer, write: { written.append($0) })
            }
        }
        return (messages, written, stop)
    }
    let whole = read(pieces: 1, room: nil)
    let pieces = read(pieces: 1 + Int(bytes.first ?? 0) % 7, room: nil)
    precondition(whole.messages == pieces.messages && whole.written == pieces.written && whole.end == pieces.end,
                 "the bytes in pieces read otherwise than whole")
    let queued = read(pieces: 1, room: Int(bytes.last ?? 0) % 4)
    precondition(queued.messages == whole.messages && queued.end == whole.end, "a full queue lost or reordered a message")
}
