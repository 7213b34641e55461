import CX11
import TouchCore

/// The X window touchbridge draws on (`--show-touches`, the presenter's laser): top-most,
/// override-redirect (no window manager frames or moves it), covering the mapped monitor, never
/// taking input (its input shape is empty, so every click goes to the window below).
///
/// With a compositor (a `_NET_WM_CM_S<screen>` selection owner) and a 32-bit ARGB visual, its pixels
/// blend with the desktop: real translucency. Without one, translucent pixels would cover the desktop
/// as opaque colour, so the window's bounding shape is cut to the circles and dots drawn: only they
/// cover the desktop. With nothing to draw it is unmapped.
///
/// It keeps a scene (a circle per finger, the laser dot and its trail, the drawings) and redraws once per batch of
/// actions, only when the scene changed: an idle overlay costs nothing. Drawing is cairo on the
/// window's Xlib surface, antialiased.
///
/// Resources are released explicitly with `destroy()` (on every exit path, before the display is
/// closed); `deinit` asserts that happened.
public final class Overlay {
    public let display: XDisplay
    /// The window (owning its colormap when ARGB); nil once destroyed.
    private var window: XWindow?
    /// Whether the window has a 32-bit ARGB visual (and its own colormap).
    private let argb: Bool
    /// Cairo's surface on the window; destroyed before the window.
    private var surface: CairoSurface?
    private var rect: PixelRect
    /// Whether a compositor blends ARGB windows (checked at creation and on every redraw).
    public private(set) var composited = false
    private var mapped = false
    private var dirty = false
    private var redrawsSinceCheck = 0

    private struct Circle { var shown = false; var x: Int32 = 0; var y: Int32 = 0; var alpha: UInt8 = 0 }
    private var circles = [Circle](repeating: Circle(), count: 10)
    /// The laser dot, and its trail (newest last), in screen pixels.
    private var laser: PixelPoint?
    /// The dot's opacity (it fades out after its finger lifts).
    private var laserAlpha: UInt8 = 255
    private var trail: [PixelPoint] = []
    static let trailLength = LaserDot.trailLength
    /// Drawings: each finger's stroke, in screen pixels; `inProgress` until the finger lifts.
    private struct Stroke { var slot: UInt8; var points: [PixelPoint]; var inProgress: Bool }
    private var strokes: [Stroke] = []
    /// Without a compositor: a 1-bit pixmap the scene is painted into, to become the bounding shape,
    /// and cairo's surface on it (destroyed before the pixmap).
    private var mask: (pixmap: XPixmap, surface: CairoSurface)?
    /// Stroke width: 6 px.
    public static let strokeWidth = 6.0

    /// Radius of a finger's circle: 28 px (about a fingertip on a 96 dpi monitor, like Touchposé's).
    public static let circleRadius = 28.0
    /// Radius of the laser dot: 9 px.
    public static let laserRadius = 9.0

    /// One colour per slot (RGB 0...1): distinct hues, so two fingers are told apart.
    public static let slotColours: [(Double, Double, Double)] = [
        (0.12, 0.47, 0.95), (0.95, 0.55, 0.10), (0.15, 0.70, 0.30), (0.85, 0.15, 0.55), (0.55, 0.35, 0.85),
        (0.10, 0.75, 0.80), (0.90, 0.80, 0.10), (0.55, 0.30, 0.15), (0.45, 0.45, 0.45), (0.60, 0.85, 0.20),
    ]

    /// Creates the window over `rect` (not mapped until something is drawn).
    ///
    /// Through `XDisplay`'s wrappers: `XShapeQueryExtension`, `XMatchVisualInfo`, `XCreateColormap`,
    /// `XCreateWindow`, `XSelectInput` (the root's `SubstructureNotifyMask`, to stay on top),
    /// `XShapeCombineRectangles` (input shape emptied), `XStoreName`, `cairo_xlib_surface_create`,
    /// `XInternAtom` and `XGetSelectionOwner`. A throw leaves nothing behind.
    public init(display: XDisplay, rect: PixelRect) throws(X11Error) {
        self.display = display
        self.rect = rect
        guard try display.hasShapeExtension() else { throw .missingExtension("SHAPE") }
        let argbVisual = try display.trueColorVisual(depth: 32)
        let visual = if let argbVisual { argbVisual } else { try display.defaultVisual() }
        // An ARGB window needs a colormap of its visual; the window owns it from its creation on.
        var colormap: XColormap?
        if let argbVisual { colormap = try display.createColormap(for: argbVisual) }
        let window = try display.createWindow(rect, visual: visual, colormap: colormap, overrideRedirect: true)
        var surface: CairoSurface?
        do {
            // Told when another window is mapped or restacked, to stay above it.
            try display.selectInput(on: try display.rootWindow(), [.structureNotify, .substructureNotify])
            // Never eat input: an empty input shape lets every click through to the window below.
            try display.setShape(.input, of: window, toRectangle: nil)
            try display.setName(of: window, "touchbridge overlay")
            surface = try CairoSurface.xlib(display, window: window, visual: visual,
                                            width: Int32(rect.width), height: Int32(rect.height))
            composited = try display.hasCompositor() && argbVisual != nil
        } catch {
            surface?.destroy()
            display.destroyWindow(window)
            throw error
        }
        self.surface = surface
        self.argb = argbVisual != nil
        self.window = window
        display.overlayWindow = window.id.rawValue
    }

    deinit {
        assert(window == nil, "Overlay was not destroyed: call destroy() on every exit path")
    }

    /// The window's id (for tests and logs); 0 once destroyed.
    public var windowID: UInt { window?.id.rawValue ?? 0 }

    /// The window, or `.closed` once destroyed.
    private func liveWindow() throws(X11Error) -> XWindow {
        guard let window else { throw .closed }
        return window
    }

    /// Covers `rect` from now on (the mapped monitor changed).
    ///
    /// Through `XDisplay`'s wrappers: `XMoveResizeWindow` and `cairo_xlib_surface_set_size`.
    public func setRect(_ new: PixelRect) throws(X11Error) {
        guard new != rect else { return }
        let window = try liveWindow()
        try display.moveResize(window, to: new)
        rect = new
        try surface?.setSize(width: Int32(new.width), height: Int32(new.height))
        freeMask()
        dirty = true
        try redrawIfNeeded()
    }

    /// Takes the overlay actions among `actions` into the scene, then redraws once if it changed.
    public func perform(_ actions: [OutputAction]) throws(X11Error) {
        for action in actions {
            guard case .overlay(let o) = action else { continue }
            switch o {
            case .cover, .remove:
                // The window itself: `XOutput` makes, moves and destroys it.
                continue
            case .touch(let slot, let p, let alpha):
                guard Int(slot) < circles.count else { continue }
                circles[Int(slot)] = Circle(shown: true, x: p.x, y: p.y, alpha: alpha)
            case .touchGone(let slot):
                guard Int(slot) < circles.count else { continue }
                circles[Int(slot)].shown = false
            case .laser(let p):
                if let old = laser {
                    trail.append(old)
                    if trail.count > Self.trailLength { trail.removeFirst(trail.count - Self.trailLength) }
                }
                laser = p
                laserAlpha = 255
            case .laserAlpha(let alpha):
                laserAlpha = alpha
            case .laserOff:
                laser = nil
                laserAlpha = 255
                trail.removeAll()
            case .laserTrim(let keep):
                if trail.count > Int(keep) { trail.removeFirst(trail.count - Int(keep)) }
            case .clearDrawings:
                strokes.removeAll { !$0.inProgress }
                for i in strokes.indices { strokes[i].points.removeAll(keepingCapacity: true) }
            case .strokeBegan(let slot, let p):
                strokes.append(Stroke(slot: slot, points: [p], inProgress: true))
            case .strokeTo(let slot, let p):
                if let i = strokes.lastIndex(where: { $0.slot == slot && $0.inProgress }) { strokes[i].points.append(p) }
            case .strokeEnded(let slot):
                if let i = strokes.lastIndex(where: { $0.slot == slot && $0.inProgress }) { strokes[i].inProgress = false }
            case .dropOldestStroke:
                if let i = strokes.firstIndex(where: { !$0.inProgress }) { strokes.remove(at: i) }
            }
            dirty = true
        }
        try redrawIfNeeded()
    }

    /// Whether anything is to be drawn.
    private var isEmpty: Bool {
        !circles.contains { $0.shown } && laser == nil && trail.isEmpty && !strokes.contains { !$0.points.isEmpty }
    }

    /// Redraws the scene if it changed: cairo paints it; without a compositor the bounding shape is
    /// cut to what was painted; the window is raised (above windows mapped since), or unmapped when
    /// empty.
    ///
    /// Through the wrappers: cairo's (`cairo_create`, `cairo_arc`, `cairo_fill`, …), `XMapRaised`,
    /// `XRaiseWindow`, `XUnmapWindow` and `XFlush`.
    private func redrawIfNeeded() throws(X11Error) {
        guard dirty else { return }
        dirty = false
        let window = try liveWindow()
        if isEmpty {
            if mapped { try display.unmap(window); mapped = false }
            try display.flush()
            return
        }
        // A compositor may start or stop at any time: look when the window is mapped, and every 60th
        // redraw while it stays mapped (one round trip a second at 60 packets/s, not one per packet).
        redrawsSinceCheck += 1
        if !mapped || redrawsSinceCheck >= 60 {
            redrawsSinceCheck = 0
            composited = try display.hasCompositor() && argb
        }
        try setBoundingShape(window)
        if !mapped { try display.mapRaised(window); mapped = true } else { try display.raise(window) }
        guard let surface else { throw .requestFailed("cairo_create") }
        let cr = try CairoContext(surface)
        paint(cr, mask: false)
        cr.destroy()
        try surface.flush()
        try display.flush()
    }

    /// Paints the scene in window coordinates. For the shape `mask`, everything opaque and 2 px larger
    /// (antialiased edges stay inside the shape).
    private func paint(_ cr: borrowing CairoContext, mask: Bool) {
        let grow = mask ? 2.0 : 0
        // Translucent only where a compositor blends; opaque otherwise (the shape does the cutting).
        let soft = composited && !mask
        cr.setAntialias(mask ? .none : .good)
        cr.setOperator(.source)
        cr.setSource(red: 0, green: 0, blue: 0, alpha: 0)
        cr.paint()
        cr.setOperator(.over)
        func wx(_ p: PixelPoint) -> (Double, Double) { (Double(p.x - rect.x) + 0.5, Double(p.y - rect.y) + 0.5) }
        // Drawings first (under the fingers): finished strokes in full colour, strokes in progress lighter.
        cr.setLineCap(round: true)
        cr.setLineJoin(round: true)
        cr.setLineWidth(Self.strokeWidth + 2 * grow)
        for stroke in strokes where !stroke.points.isEmpty {
            let (r, g, b) = Self.slotColours[Int(stroke.slot) % Self.slotColours.count]
            cr.newPath()
            let (x0, y0) = wx(stroke.points[0])
            cr.move(toX: x0, y: y0)
            if stroke.points.count == 1 { cr.line(toX: x0, y: y0) }  // a dot: a round cap
            for p in stroke.points.dropFirst() { let (x, y) = wx(p); cr.line(toX: x, y: y) }
            if stroke.inProgress && !mask {
                cr.setSource(red: r + (1 - r) * 0.5, green: g + (1 - g) * 0.5, blue: b + (1 - b) * 0.5, alpha: soft ? 0.7 : 1)
            } else {
                cr.setSource(red: r, green: g, blue: b, alpha: 1)
            }
            cr.stroke()
        }
        for (slot, c) in circles.enumerated() where c.shown {
            let (r, g, b) = Self.slotColours[slot % Self.slotColours.count]
            let a = Double(c.alpha) / 255
            // The circle shrinks as it fades too, so a fade shows without a compositor as well.
            let radius = Self.circleRadius * (0.5 + 0.5 * a)
            let (x, y) = wx(PixelPoint(x: c.x, y: c.y))
            cr.newPath()
            cr.circle(x: x, y: y, radius: radius + grow)
            cr.setSource(red: r, green: g, blue: b, alpha: soft ? 0.45 * a : 1)
            cr.fillPreserve()
            cr.setLineWidth(3)
            cr.setSource(red: r * 0.6, green: g * 0.6, blue: b * 0.6, alpha: soft ? 0.9 * a : 1)
            cr.stroke()
        }
        for (i, p) in trail.enumerated() {
            let f = Double(i + 1) / Double(trail.count + 1)
            let (x, y) = wx(p)
            cr.newPath()
            cr.circle(x: x, y: y, radius: Self.laserRadius * (0.3 + 0.6 * f) + grow)
            cr.setSource(red: 1, green: 0.1, blue: 0.1, alpha: soft ? 0.6 * f : 1)
            cr.fill()
        }
        if let p = laser {
            let (x, y) = wx(p)
            // Like a circle, the dot shrinks as it fades, so the fade shows without a compositor too.
            let a = Double(laserAlpha) / 255
            cr.newPath()
            cr.circle(x: x, y: y, radius: Self.laserRadius * (0.5 + 0.5 * a) + grow)
            cr.setSource(red: 1, green: 0, blue: 0, alpha: soft ? a : 1)
            cr.fill()
        }
    }

    /// Without a compositor, the window's bounding shape is what `paint` covers (painted into a 1-bit
    /// pixmap), so only the drawing covers the desktop; with one, the whole window (its transparent
    /// pixels blend away).
    ///
    /// Through the wrappers: `XShapeCombineRectangles`, `XCreatePixmap`,
    /// `cairo_xlib_surface_create_for_bitmap` and `XShapeCombineMask` (ShapeBounding).
    private func setBoundingShape(_ window: XWindow) throws(X11Error) {
        if composited {
            try display.setShape(.bounding, of: window, toRectangle: (Int32(rect.width), Int32(rect.height)))
            return
        }
        if mask == nil {
            let pixmap = try display.createPixmap(on: window, width: Int32(rect.width), height: Int32(rect.height), depth: 1)
            do {
                mask = (pixmap, try CairoSurface.xlibBitmap(display, bitmap: pixmap))
            } catch {
                display.freePixmap(pixmap)
                throw error
            }
        }
        guard let mask else { return }
        let cr = try CairoContext(mask.surface)
        paint(cr, mask: true)
        cr.destroy()
        try mask.surface.flush()
        try display.setShape(.bounding, of: window, toMask: mask.pixmap)
    }

    /// Frees the shape mask (on resize and destroy): its surface, then its pixmap.
    private func freeMask() {
        guard let mask else { return }
        mask.surface.destroy()
        display.freePixmap(mask.pixmap)
        self.mask = nil
    }

    /// Another window was mapped or restacked: the overlay, when shown, goes back on top.
    ///
    /// Through the wrappers: `XRaiseWindow` and `XFlush`.
    public func raiseIfShown() throws(X11Error) {
        guard mapped else { return }
        try display.raise(try liveWindow())
        try display.flush()
    }

    /// Destroys the window and its resources: the cairo surfaces, the mask pixmap, the window and its
    /// colormap, in that order (the types refuse any other). Safe to call twice; call it before
    /// closing the display.
    ///
    /// Through the wrappers: `cairo_surface_destroy`, `XFreePixmap`, `XDestroyWindow`,
    /// `XFreeColormap` and `XFlush`.
    public func destroy() {
        guard let window else { return }
        surface?.destroy()
        surface = nil
        freeMask()
        display.destroyWindow(window)
        try? display.flush()
        self.window = nil
        display.overlayWindow = 0
    }
}
