// The live view under GNOME and KDE: the ScreenCast portal's stream of the shared monitor, read with
// libpipewire (CPipeWire's shim, loaded at run time). Typed wrappers over every tb_pw_ call.
import CPipeWire
import Glibc
import TouchCore
import TouchOutput

/// One PipeWire stream of the monitor the portal session shares, on a PipeWire loop of its own whose
/// descriptor the desktop holding it watches.
///
/// - Frames are raw 32-bit BGRx or BGRA in shared memory (cairo's RGB24 as it lies in memory), asked
///   for without DMA-BUF modifiers, so the compositor hands over memory this process maps.
/// - The compositor sends a frame when the screen changed (Mutter and KWin cast on damage): a still
///   screen costs no frame and no wake-up.
/// - The stream starts at once, for a first picture; once it came, or when nobody views any more
///   (`watchPixels(false)`), it is paused: a changing screen costs nothing while nobody views. The
///   compositor's next frame after viewing starts again replaces the picture kept over the pause.
/// - The newest frame is held until a newer one comes; the others go back to the compositor at once.
public final class PipeWireCast: PixelStream {
    private var cast: OpaquePointer?
    /// The shared monitor in the compositor's logical layout: as Start said, then as the desktop's
    /// monitors say (`follow`) (nil: not said; the picture is then taken as the whole viewed rectangle).
    public private(set) var area: PixelRect?
    private let node: UInt32
    private var failure: String?
    private var watching = false
    private var paused = false
    private var hasPicture = false
    /// Whether `withPicture` has waited for the first frame: it waits once; a later capture with no
    /// frame yet is not there yet at once (the view tries again every 2 s: no stall of the bridge's
    /// loop at each).
    private var waitedForFirst = false

    /// How long `withPicture` waits for the first frame, in milliseconds: longer, and the frame is
    /// not there yet (`OutputError.notYet`); its coming is news (`dispatch`), and the view asks again.
    static let firstPictureWait: Int32 = 250

    /// Connects to PipeWire over `remote` (taken: closed here whatever happens) and asks for node
    /// `node`'s frames (`tb_pw_cast_open`); paused until watched.
    public init(remote: Int32, node: UInt32, area: PixelRect?) throws(OutputError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let made = tb_pw_cast_open(remote, node, &error, error.count) else {
            throw OutputError(origin: "PipeWire", message: String(cString: error), kind: 7)
        }
        cast = made
        self.area = area
        self.node = node
    }

    deinit { close() }

    /// `tb_pw_cast_descriptor`: readable when the stream's loop has work.
    public var descriptor: Int32 { cast.map { tb_pw_cast_descriptor($0) } ?? -1 }

    /// `tb_pw_cast_dispatch`, then `tb_pw_cast_error` when it failed.
    public func dispatch() -> (newPicture: Bool, failure: String?) {
        guard let cast else { return (false, failure) }
        let flags = tb_pw_cast_dispatch(cast)
        if flags & Int32(TB_PW_FAILED) != 0, failure == nil {
            failure = String(cString: tb_pw_cast_error(cast))
        }
        let new = flags & Int32(TB_PW_NEW_FRAME) != 0
        if new { hasPicture = true }
        // The first picture came and nobody views: no more frames until somebody does.
        if new, !watching, failure == nil { try? setActive(false) }
        return (new, failure)
    }

    /// The shared monitor is the one at the place Start gave (the compositor keeps a monitor's place
    /// when it turns or changes mode): its rectangle now. A monitor no longer there keeps the last.
    public func follow(monitors: [PixelRect]) {
        area = Self.followed(area, among: monitors)
    }

    /// `area` once `monitors` are the desktop's: the non-empty one at its place, else itself.
    public static func followed(_ area: PixelRect?, among monitors: [PixelRect]) -> PixelRect? {
        guard let area else { return nil }
        return monitors.first { $0.x == area.x && $0.y == area.y && !$0.isEmpty } ?? area
    }

    /// `tb_pw_cast_close`. Idempotent.
    public func close() {
        if let cast { tb_pw_cast_close(cast) }
        cast = nil
        hasPicture = false
    }

    private func error(_ message: String) -> OutputError {
        OutputError(origin: "PipeWire", message: "the view: \(message)", kind: 7)
    }

    /// Frames come while watched; the stream is paused while not, keeping the picture it holds.
    public func watchPixels(_ on: Bool) throws(OutputError) {
        guard cast != nil, on != watching else { return }
        watching = on
        if on || hasPicture { try setActive(on) }
    }

    /// `tb_pw_cast_set_active`.
    private func setActive(_ on: Bool) throws(OutputError) {
        guard let cast, on == paused else { return }
        let r = tb_pw_cast_set_active(cast, on)
        if r < 0 { throw error("cannot \(on ? "start" : "pause") the screen cast: \(String(cString: strerror(-r)))") }
        paused = !on
    }

    public var pixelsHolding: String {
        guard let cast else { return "nothing" }
        let format = String(cString: tb_pw_cast_format(cast))
        var frames: UInt64 = 0
        let states = String(cString: tb_pw_cast_states(cast, &frames))
        let stream = "a PipeWire stream of node \(node)\(format.isEmpty ? "" : " (\(format))") [\(states.isEmpty ? "new" : states); \(frames) frames]"
        return "\(stream)\(paused ? ", paused" : ""), \(hasPicture ? "a frame held" : "no frame yet")"
    }

    /// The newest frame, with `rect` (the viewed monitor, in the compositor's logical layout) placed in
    /// it; the first one waited for, at most `firstPictureWait`, once.
    public func withPicture(of rect: PixelRect, _ body: (ScreenPicture) throws(OutputError) -> Void) throws(OutputError) {
        guard let cast else { throw error("the screen cast is closed") }
        if let failure { throw error(failure) }
        let clock = ContinuousClock(), deadline = clock.now + .milliseconds(Self.firstPictureWait)
        let wait = !hasPicture && !waitedForFirst
        if wait { waitedForFirst = true }
        while wait, !hasPicture, failure == nil, clock.now < deadline {
            let left = (deadline - clock.now).components
            var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, Int32(left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000) + 1)
            _ = dispatch()
        }
        if let failure { throw error(failure) }
        var pixels: UnsafeMutableRawPointer?
        var width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
        guard tb_pw_cast_frame(cast, &pixels, &width, &height, &stride) == 1, let pixels else {
            var notYet = error("no picture from the screen cast yet (\(pixelsHolding))")
            notYet.notYet = true
            throw notYet
        }
        let region: (x: Double, y: Double, width: Double, height: Double)
        if let area, !area.isEmpty {
            guard rect.x >= area.x, rect.y >= area.y, rect.x + rect.width <= area.x + area.width,
                  rect.y + rect.height <= area.y + area.height else {
                throw error("the shared monitor (\(area)) does not show \(rect): choose that monitor in the portal's dialog (delete the restore token to be asked again)")
            }
            // A monitor just turned: the compositor's frames of its new shape are coming (the format
            // is negotiated again); until one has, the picture is not there yet rather than squeezed.
            if (area.width > area.height && width < height) || (area.width < area.height && width > height) {
                var turning = error("the screen cast's frames have not turned with the monitor yet (\(width)x\(height) for \(area))")
                turning.notYet = true
                throw turning
            }
            // A scaled monitor's frames have more pixels than its logical size.
            let sx = Double(width) / Double(area.width), sy = Double(height) / Double(area.height)
            region = (Double(rect.x - area.x) * sx, Double(rect.y - area.y) * sy, Double(rect.width) * sx, Double(rect.height) * sy)
        } else {
            region = (0, 0, Double(width), Double(height))
        }
        try body(ScreenPicture(pixels: pixels, width: width, height: height, stride: stride, region: region, yInverted: false))
    }
}
