// The one WebSocket reader of a page's socket, whichever path carries it: sans-IO, bytes in; messages,
// replies, the close and a pause out. (The close frame that ends the socket is
// written after `isClosed` is set, so a driver can send it at once rather than behind waiting replies.)
//
// Two drivers feed it and carry out what it says:
// - a plain page's socket, on the Bridge's own loop (BridgeWebSocket.swift): `recv(2)` straight into the
//   reader's buffer (`space`, `didRead`), `send(2)` of its replies;
// - a TLS page's, in its channel's pipeline on the server's loop (TLSWebSocket.swift): the TLS
//   handler's decrypted bytes copied in (`append`), replies written to the channel.
// The framing (RFC 6455 §5) is `WebSocketWire`'s; each whole message is decoded once by the reader's
// `Messages` (TouchWeb's `MessageReader`: a PoseAI packet, a command, or why it is dropped) and offered
// to the connection's queue by the driver's `offer`. A queue that takes
// no more makes the reader hold that message and answer `.paused`: the driver stops reading the socket
// (TCP then pushes back on the page) until the queue has drained, and calls `resume`, which offers the
// held message first and goes on where it stopped. Pings are answered, the close handshake echoed, a
// frame over the largest message or one RFC 6455 forbids ends the socket with its close code.
//
// Bounds: the buffer holds the largest frame and one read behind it (`capacity`), never more; what does
// not fit stays with the driver (the TLS one keeps the TLS handler's output, its reads held).
#if canImport(Glibc)
import Glibc
#endif
import TouchCore

/// What a page's messages are decoded into, once each, as the reader reads them.
public protocol WebSocketMessages {
    associatedtype Message
    /// One whole message's payload (a text or binary frame with `fin`), received at `received`.
    mutating func read(_ payload: UnsafeRawBufferPointer, received: Instant) -> Message
    /// A fragment (a frame without `fin`, or a continuation): the page never sends them; dropped.
    mutating func fragment(received: Instant) -> Message
}

/// What a run of the reader ends with.
public enum WebSocketStop: Equatable, Sendable {
    /// Every whole frame was read: more bytes are wanted.
    case needBytes
    /// The queue took no more: one message is held; read nothing until `resume`.
    case paused
    /// The socket ends (after the close frame the run wrote): the page's close, or a failure.
    case closed(WebSocketFailure?)
}

/// Why the reader ended the socket; counted and logged by the driver as a dropped message.
public enum WebSocketFailure: Equatable, Sendable {
    /// A frame larger than the largest message (close code 1009).
    case tooLarge
    /// A frame RFC 6455 forbids, and why (close code 1002).
    case protocolError(String)

    /// Its close code.
    public var code: UInt16 {
        switch self {
        case .tooLarge: return WebSocketWire.messageTooBig
        case .protocolError: return WebSocketWire.protocolError
        }
    }

    /// The drop line's words.
    public var detail: String {
        switch self {
        case .tooLarge: return "a frame larger than 64 KiB (the socket was closed)"
        case .protocolError(let why): return "\(why) (the socket was closed)"
        }
    }
}

/// One page's WebSocket input: its buffer, its framing, its message decoder, the message it holds.
/// Confined to its driver's loop.
public final class WebSocketReader<Messages: WebSocketMessages> {
    public typealias Message = Messages.Message

    /// The largest message read.
    public let maxMessageBytes: Int
    /// Room for the largest frame and one read behind it.
    public let capacity: Int

    private let buffer: UnsafeMutableRawPointer
    /// Bytes read and not parsed yet: `[start, end)` of `buffer`.
    private var start = 0, end = 0
    private var messages: Messages
    /// A message the queue did not take: it goes in first at `resume`.
    public private(set) var held: Message?
    public private(set) var isClosed = false

    public init(maxMessageBytes: Int, messages: Messages) {
        self.messages = messages
        self.maxMessageBytes = maxMessageBytes
        capacity = maxMessageBytes + WebSocketWire.maxHeaderBytes + WebSocketWire.readBytes
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Bytes waiting to be parsed.
    public var unread: Int { end - start }

    // MARK: bytes in

    /// Where the next read goes: at most `readBytes`, after the unparsed rest moved to the front.
    public func space() -> UnsafeMutableRawBufferPointer {
        compact()
        return UnsafeMutableRawBufferPointer(start: buffer + end, count: min(WebSocketWire.readBytes, capacity - end))
    }

    /// `count` bytes were read into `space()`.
    public func didRead(_ count: Int) {
        precondition(count >= 0 && end + count <= capacity)
        end += count
    }

    /// Copies in what fits of `bytes`; returns how many it took (the driver keeps the rest for later).
    public func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        compact()
        let taken = min(bytes.count, capacity - end)
        if taken > 0 { (buffer + end).copyMemory(from: bytes.baseAddress!, byteCount: taken) }
        end += taken
        return taken
    }

    private func compact() {
        guard start > 0 else { return }
        if end > start { memmove(buffer, buffer + start, end - start) }
        end -= start
        start = 0
    }

    // MARK: messages and replies out

    /// Reads every whole frame: each message to `offer` (false: the queue is full, the message is held
    /// and the run pauses), each reply's bytes to `write`; `heard` once when at least one frame was read.
    public func run(received now: Instant, offer: (Message) -> Bool, write: ([UInt8]) -> Void,
             heard: () -> Void = {}) -> WebSocketStop {
        if isClosed { return .closed(nil) }
        if held != nil { return .paused }
        var sawFrame = false
        defer {
            if sawFrame { heard() }
            if start == end { start = 0; end = 0 }
        }
        while true {
            let verdict = WebSocketWire.parse(UnsafeRawBufferPointer(start: buffer + start, count: end - start),
                                              maxPayload: maxMessageBytes)
            switch verdict {
            case .incomplete:
                return .needBytes
            case .tooLarge:
                return fail(.tooLarge, write: write)
            case .protocolError(let why):
                return fail(.protocolError(why), write: write)
            case .frame(let header, let length):
                let payload = UnsafeMutableRawBufferPointer(start: buffer + start + header.payloadOffset, count: header.payloadCount)
                if let mask = header.mask { WebSocketWire.unmask(payload, with: mask) }
                start += length
                sawFrame = true
                switch header.opcode {
                case WebSocketWire.text, WebSocketWire.binary, WebSocketWire.continuation:
                    let item = header.fin && header.opcode != WebSocketWire.continuation
                        ? messages.read(UnsafeRawBufferPointer(payload), received: now)
                        // Fragments: the page never sends them. Dropped (the continuation frames too).
                        : messages.fragment(received: now)
                    if !offer(item) {
                        held = item
                        return .paused
                    }
                case WebSocketWire.ping:
                    write(WebSocketWire.frame(opcode: WebSocketWire.pong, payload: UnsafeRawBufferPointer(payload)))
                case WebSocketWire.close:
                    // The close handshake: its code echoed (RFC 6455 §5.5.1), then the end.
                    let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : WebSocketWire.normalClosure
                    isClosed = true
                    write(WebSocketWire.closeFrame(code: code))
                    return .closed(nil)
                default:
                    break  // a pong
                }
            }
        }
    }

    /// Offers the held message again; when the queue takes it, reads on (as `run`).
    public func resume(received now: Instant, offer: (Message) -> Bool, write: ([UInt8]) -> Void,
                heard: () -> Void = {}) -> WebSocketStop {
        if isClosed { return .closed(nil) }
        if let item = held {
            guard offer(item) else { return .paused }
            held = nil
        }
        return run(received: now, offer: offer, write: write, heard: heard)
    }

    /// At the socket's end: the held message, then every whole message behind it, to `offer`, which
    /// takes them all (past the queue's bound, for the last drain), so what the page sent before its end
    /// is applied. Nothing is written (a ping is not answered, a close frame ends the reading).
    @discardableResult
    public func flush(received now: Instant, offer: (Message) -> Void) -> WebSocketStop {
        if isClosed { return .closed(nil) }
        if let item = held { offer(item) }
        held = nil
        return run(received: now, offer: { offer($0); return true }, write: { _ in })
    }

    /// Ends the reading: nothing more is parsed (the driver closes the socket with its close frame).
    public func close() { isClosed = true }

    private func fail(_ failure: WebSocketFailure, write: ([UInt8]) -> Void) -> WebSocketStop {
        isClosed = true
        write(WebSocketWire.closeFrame(code: failure.code))
        return .closed(failure)
    }
}
