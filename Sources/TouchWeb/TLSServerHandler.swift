// HTTPS and WSS (--tls-cert, --tls-key) over the system's OpenSSL 3, loaded at run time (CTLS): the handler
// first in each connection's pipeline after admission. What the network gives is fed to the connection's TLS
// and its plaintext passed on; what the server writes is encrypted and written with the caller's promise.
// Only the server's side: no client certificates, no renegotiation, TLS 1.2 and later.
//
// A connection the server closes sends its close_notify and closes at once: it does not wait for the peer's
// (a server that has said all it will say need not), so a closed connection holds nothing afterwards, however
// many handshakes a flood makes (TLSMemoryTests).
import CTLS
import HummingbirdCore
import Logging
import NIOCore

/// A server's certificate chain and private key, made once at start (`TLSContext.make`), shared by its
/// connections. Its OpenSSL context is freed when the last connection and the server have let it go.
public final class TLSContext: Sendable {
    /// Why TLS could not be set up, in words.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    nonisolated(unsafe) let context: OpaquePointer

    /// From the PEM bytes of `certificates` (the server's, then its chain) and of an unencrypted `key`.
    public init(certificates: [UInt8], key: [UInt8]) throws(Failure) {
        if let why = tb_tls_load() { throw Failure(description: String(cString: why)) }
        var error = [CChar](repeating: 0, count: 512)
        let made = certificates.withUnsafeBufferPointer { c in
            key.withUnsafeBufferPointer { k in
                c.withMemoryRebound(to: CChar.self) { c in
                    k.withMemoryRebound(to: CChar.self) { k in
                        tb_tls_context_new(c.baseAddress, c.count, k.baseAddress, k.count, &error, error.count)
                    }
                }
            }
        }
        guard let made else {
            throw Failure(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        context = made
    }

    deinit { tb_tls_context_free(context) }
}

/// One connection's TLS (CTLS's `tb_tls`), each of its C functions called here only.
struct TLSSession {
    /// What a read gave: plaintext bytes, or why none.
    enum Read { case bytes(Int), wantsInput, closed, failed }

    private let raw: OpaquePointer

    /// A new server connection's TLS; nil when out of memory.
    init?(_ context: TLSContext) {
        guard let raw = tb_tls_new(context.context) else { return nil }
        self.raw = raw
    }

    func free() { tb_tls_free(raw) }
    /// Keeps the network's bytes for `read`; false when they could not be kept.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Bool { tb_tls_feed(raw, bytes.baseAddress, bytes.count) == 0 }
    /// Advances the handshake, then decrypts into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        let result = tb_tls_read(raw, buffer.baseAddress, buffer.count)
        switch result {
        case 1...: return .bytes(result)
        case Int(TB_TLS_CLOSED): return .closed
        case Int(TB_TLS_FAILED): return .failed
        default: return .wantsInput
        }
    }
    var isReady: Bool { tb_tls_ready(raw) == 1 }
    /// Encrypts all of `bytes`; false on a protocol error.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool { tb_tls_write(raw, bytes.baseAddress, bytes.count) >= 0 }
    /// A close_notify, once, for the next `take`.
    func close() { tb_tls_close(raw) }
    /// How many bytes wait for the network.
    var pending: Int { Int(tb_tls_pending(raw)) }
    /// Takes up to `buffer.count` of them.
    func take(into buffer: UnsafeMutableRawBufferPointer) -> Int { max(0, tb_tls_take(raw, buffer.baseAddress, buffer.count)) }
    /// Why the last call failed, in OpenSSL's words.
    static func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        return String(cString: tb_tls_error(&buffer, buffer.count))
    }
}

/// One connection's TLS, on its channel's loop.
final class TLSServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Plaintext is read in pieces of at most a TLS record's size.
    static let recordBytes = 16_384

    private let context: TLSContext
    /// Where a failed connection is counted and logged (one line per 10 s), on this loop.
    private let table: ConnectionTable
    private var tls: TLSSession?
    /// What the server wrote before the handshake was done: encrypted once it is.
    private var early: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    private var failed = false

    init(context: TLSContext, table: ConnectionTable) {
        self.context = context
        self.table = table
    }

    func handlerAdded(context: ChannelHandlerContext) {
        tls = TLSSession(self.context)
        if tls == nil { fail(context, "out of memory for a TLS connection") }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        for (_, promise) in early { promise?.fail(ChannelError.ioOnClosedChannel) }
        early.removeAll()
        context.fireChannelInactive()
    }

    private func release() {
        tls?.free()
        tls = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let tls, !failed else { return }
        let bytes = unwrapInboundIn(data)
        guard bytes.withUnsafeReadableBytes({ tls.feed($0) }) else { return fail(context, "out of memory for TLS input") }
        var delivered = false
        readLoop: while let tls = self.tls {
            var plain = context.channel.allocator.buffer(capacity: Self.recordBytes)
            var outcome = TLSSession.Read.wantsInput
            plain.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.recordBytes) { out in
                outcome = tls.read(into: out)
                if case .bytes(let count) = outcome { return count }
                return 0
            }
            switch outcome {
            case .bytes:
                context.fireChannelRead(wrapInboundOut(plain))
                delivered = true
            case .closed:
                // The peer's close_notify: ours in answer, then the connection goes.
                tls.close()
                flushNetwork(context)
                context.close(promise: nil)
                break readLoop
            case .failed:
                let why = TLSSession.lastError()
                flushNetwork(context)  // the alert OpenSSL wrote, if any
                return fail(context, "TLS: \(why)")
            case .wantsInput:
                break readLoop
            }
        }
        if let tls = self.tls, tls.isReady, !early.isEmpty {
            // What the server wrote during the handshake (an HTTP server answers only after a request, so
            // this is for completeness), then flushed: it may have been flushed already while it waited.
            let waiting = early
            early.removeAll()
            for (buffer, promise) in waiting { encrypt(context, buffer, promise) }
            context.flush()
        }
        flushNetwork(context)
        if delivered { context.fireChannelReadComplete() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Passed on from channelRead, after the plaintext it delivered.
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        guard let tls, !failed else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if !tls.isReady {
            early.append((buffer, promise))
            return
        }
        encrypt(context, buffer, promise)
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode != .input, let tls {
            tls.close()
            flushNetwork(context)
        }
        context.close(mode: mode, promise: promise)
    }

    /// Encrypts `buffer` and writes what it became, with `promise`.
    private func encrypt(_ context: ChannelHandlerContext, _ buffer: ByteBuffer, _ promise: EventLoopPromise<Void>?) {
        guard let tls else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        guard buffer.withUnsafeReadableBytes({ tls.write($0) }) else {
            let why = "TLS: \(TLSSession.lastError())"
            promise?.fail(Failed(description: why))
            return fail(context, why)
        }
        context.write(wrapOutboundOut(network(context)), promise: promise)
    }

    /// Everything TLS has for the network, in one buffer.
    private func network(_ context: ChannelHandlerContext) -> ByteBuffer {
        guard let tls else { return context.channel.allocator.buffer(capacity: 0) }
        let pending = tls.pending
        var out = context.channel.allocator.buffer(capacity: pending)
        if pending > 0 {
            out.writeWithUnsafeMutableBytes(minimumWritableBytes: pending) { tls.take(into: $0) }
        }
        return out
    }

    /// Writes and flushes what TLS has for the network (the handshake's answers, a close_notify), if anything.
    private func flushNetwork(_ context: ChannelHandlerContext) {
        guard let tls, tls.pending > 0 else { return }
        context.writeAndFlush(wrapOutboundOut(network(context)), promise: nil)
    }

    /// The connection goes: counted and logged here (OpenSSL's own reason at debug level), not passed on
    /// as an error, which the HTTP handlers behind would log as theirs.
    private func fail(_ context: ChannelHandlerContext, _ why: String) {
        guard !failed else { return }
        failed = true
        for (_, promise) in early { promise?.fail(Failed(description: why)) }
        early.removeAll()
        let peer = context.channel.remoteAddress?.ipAddress ?? "?"
        table.logger.debug("TLS connection from \(peer) closed: \(why)")
        table.log(.tlsFailed, peer, at: context.eventLoop.now)
        context.close(promise: nil)
    }
}

/// A server child channel with TLS in front of `base`'s pipeline (in place of HummingbirdTLS's, which
/// brought BoringSSL).
struct TLSServerChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let context: TLSContext
    let table: NIOLoopBoundBox<ConnectionTable>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let table = self.table
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(TLSServerHandler(context: context, table: table.value))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension TLSServerChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    var responder: HTTPChannelHandler.Responder { base.responder }
}
