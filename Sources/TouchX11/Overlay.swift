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
    private var window: UInt = 0
    private var colormap: UInt = 0
    private var surface: OpaquePointer?
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
    static let trailLength = PresenterMode.trailLength
    /// Drawings: each finger's stroke, in screen pixels; `inProgress` until the finger lifts.
    private struct Stroke { var slot: UInt8; var points: [PixelPoint]; var inProgress: Bool }
    private var strokes: [Stroke] = []
    /// Without a compositor: a 1-bit pixmap the scene is painted into, to become the bounding shape.
    private var maskPixmap: UInt = 0
    private var maskSurface: OpaquePointer?
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
    /// The corresponding C functions are `XShapeQueryExtension`, `XMatchVisualInfo`, `XCreateColormap`,
    /// `XCreateWindow`, `XSelectInput` (the root's `SubstructureNotifyMask`, to stay on top),
    /// `XShapeCombineRectangles` (input shape emptied) and `cairo_xlib_surface_create`. Nothing after
    /// the window is made can fail, so a throw leaves nothing behind.
    public init(display: XDisplay, rect: PixelRect) throws(X11Error) {
        self.display = display
        self.rect = rect
        let dpy = try display.display()
        let screen = display.screen
        var shapeEvent: Int32 = 0, shapeError: Int32 = 0
        guard XShapeQueryExtension(dpy, &shapeEvent, &shapeError) != 0 else { throw .missingExtension("SHAPE") }
        let root = XRootWindow(dpy, screen)
        var info = XVisualInfo()
        let argb = XMatchVisualInfo(dpy, screen, 32, TrueColor, &info) != 0
        var attributes = XSetWindowAttributes()
        attributes.override_redirect = 1
        attributes.background_pixel = 0
        attributes.border_pixel = 0
        let visual: UnsafeMutablePointer<Visual>
        let depth: Int32
        var mask = UInt(CWOverrideRedirect | CWBackPixel | CWBorderPixel)
        if argb {
            visual = info.visual
            depth = 32
            colormap = XCreateColormap(dpy, root, visual, AllocNone)
            attributes.colormap = colormap
            mask |= UInt(CWColormap)
        } else {
            visual = XDefaultVisual(dpy, screen)
            depth = XDefaultDepth(dpy, screen)
        }
        window = XCreateWindow(dpy, root, Int32(rect.x), Int32(rect.y), UInt32(max(1, rect.width)),
                               UInt32(max(1, rect.height)), 0, depth, UInt32(InputOutput), visual, mask, &attributes)
        guard window != 0 else { throw .requestFailed("XCreateWindow") }
        display.overlayWindow = window
        // Told when another window is mapped or restacked, to stay above it.
        XSelectInput(dpy, root, StructureNotifyMask | SubstructureNotifyMask)
        // Never eat input: an empty input shape lets every click through to the window below.
        XShapeCombineRectangles(dpy, window, ShapeInput, 0, 0, nil, 0, ShapeSet, Unsorted)
        let name = "touchbridge overlay"
        _ = name.withCString { XStoreName(dpy, window, $0) }
        surface = cairo_xlib_surface_create(dpy, window, visual, Int32(max(1, rect.width)), Int32(max(1, rect.height)))
        composited = Self.hasCompositor(dpy, screen: screen) && argb
    }

    deinit {
        assert(window == 0, "Overlay was not destroyed: call destroy() on every exit path")
    }

    /// The window's id (for tests and logs).
    public var windowID: UInt { window }

    /// Whether a compositor owns `_NET_WM_CM_S<screen>`.
    ///
    /// The corresponding C functions are `XInternAtom` and `XGetSelectionOwner`.
    static func hasCompositor(_ dpy: OpaquePointer, screen: Int32) -> Bool {
        let atom = "_NET_WM_CM_S\(screen)".withCString { XInternAtom(dpy, $0, 0) }
        return XGetSelectionOwner(dpy, atom) != 0
    }

    /// Covers `rect` from now on (the mapped monitor changed).
    ///
    /// The corresponding C functions are `XMoveResizeWindow` and `cairo_xlib_surface_set_size`.
    public func setRect(_ new: PixelRect) throws(X11Error) {
        guard new != rect else { return }
        let dpy = try display.display()
        rect = new
        XMoveResizeWindow(dpy, window, Int32(new.x), Int32(new.y), UInt32(max(1, new.width)), UInt32(max(1, new.height)))
        if let surface { cairo_xlib_surface_set_size(surface, Int32(max(1, new.width)), Int32(max(1, new.height))) }
        freeMask(dpy)
        dirty = true
        try redrawIfNeeded()
    }

    /// Takes the overlay actions among `actions` into the scene, then redraws once if it changed.
    public func perform(_ actions: [OutputAction]) throws(X11Error) {
        for action in actions {
            guard case .overlay(let o) = action else { continue }
            switch o {
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
    /// The corresponding C functions are cairo's (`cairo_create`, `cairo_arc`, `cairo_fill`, …),
    /// `XMapRaised`, `XRaiseWindow`, `XUnmapWindow` and `XFlush`.
    private func redrawIfNeeded() throws(X11Error) {
        guard dirty else { return }
        dirty = false
        let dpy = try display.display()
        if isEmpty {
            if mapped { XUnmapWindow(dpy, window); mapped = false }
            XFlush(dpy)
            return
        }
        // A compositor may start or stop at any time: look when the window is mapped, and every 60th
        // redraw while it stays mapped (one round trip a second at 60 packets/s, not one per packet).
        redrawsSinceCheck += 1
        if !mapped || redrawsSinceCheck >= 60 {
            redrawsSinceCheck = 0
            composited = Self.hasCompositor(dpy, screen: display.screen) && colormap != 0
        }
        try setBoundingShape(dpy)
        if !mapped { XMapRaised(dpy, window); mapped = true } else { XRaiseWindow(dpy, window) }
        guard let surface, let cr = cairo_create(surface) else { throw .requestFailed("cairo_create") }
        paint(cr, mask: false)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        XFlush(dpy)
    }

    /// Paints the scene in window coordinates. For the shape `mask`, everything opaque and 2 px larger
    /// (antialiased edges stay inside the shape).
    private func paint(_ cr: OpaquePointer, mask: Bool) {
        let grow = mask ? 2.0 : 0
        // Translucent only where a compositor blends; opaque otherwise (the shape does the cutting).
        let soft = composited && !mask
        cairo_set_antialias(cr, mask ? CAIRO_ANTIALIAS_NONE : CAIRO_ANTIALIAS_GOOD)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_rgba(cr, 0, 0, 0, 0)
        cairo_paint(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
        func wx(_ p: PixelPoint) -> (Double, Double) { (Double(p.x - rect.x) + 0.5, Double(p.y - rect.y) + 0.5) }
        // Drawings first (under the fingers): finished strokes in full colour, strokes in progress lighter.
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        cairo_set_line_width(cr, Self.strokeWidth + 2 * grow)
        for stroke in strokes where !stroke.points.isEmpty {
            let (r, g, b) = Self.slotColours[Int(stroke.slot) % Self.slotColours.count]
            cairo_new_path(cr)
            let (x0, y0) = wx(stroke.points[0])
            cairo_move_to(cr, x0, y0)
            if stroke.points.count == 1 { cairo_line_to(cr, x0, y0) }  // a dot: a round cap
            for p in stroke.points.dropFirst() { let (x, y) = wx(p); cairo_line_to(cr, x, y) }
            if stroke.inProgress && !mask {
                cairo_set_source_rgba(cr, r + (1 - r) * 0.5, g + (1 - g) * 0.5, b + (1 - b) * 0.5, soft ? 0.7 : 1)
            } else {
                cairo_set_source_rgba(cr, r, g, b, 1)
            }
            cairo_stroke(cr)
        }
        for (slot, c) in circles.enumerated() where c.shown {
            let (r, g, b) = Self.slotColours[slot % Self.slotColours.count]
            let a = Double(c.alpha) / 255
            // The circle shrinks as it fades too, so a fade shows without a compositor as well.
            let radius = Self.circleRadius * (0.5 + 0.5 * a)
            let (x, y) = wx(PixelPoint(x: c.x, y: c.y))
            cairo_new_path(cr)
            cairo_arc(cr, x, y, radius + grow, 0, 2 * Double.pi)
            cairo_set_source_rgba(cr, r, g, b, soft ? 0.45 * a : 1)
            cairo_fill_preserve(cr)
            cairo_set_line_width(cr, 3)
            cairo_set_source_rgba(cr, r * 0.6, g * 0.6, b * 0.6, soft ? 0.9 * a : 1)
            cairo_stroke(cr)
        }
        for (i, p) in trail.enumerated() {
            let f = Double(i + 1) / Double(trail.count + 1)
            let (x, y) = wx(p)
            cairo_new_path(cr)
            cairo_arc(cr, x, y, Self.laserRadius * (0.3 + 0.6 * f) + grow, 0, 2 * Double.pi)
            cairo_set_source_rgba(cr, 1, 0.1, 0.1, soft ? 0.6 * f : 1)
            cairo_fill(cr)
        }
        if let p = laser {
            let (x, y) = wx(p)
            // Like a circle, the dot shrinks as it fades, so the fade shows without a compositor too.
            let a = Double(laserAlpha) / 255
            cairo_new_path(cr)
            cairo_arc(cr, x, y, Self.laserRadius * (0.5 + 0.5 * a) + grow, 0, 2 * Double.pi)
            cairo_set_source_rgba(cr, 1, 0, 0, soft ? a : 1)
            cairo_fill(cr)
        }
    }

    /// Without a compositor, the window's bounding shape is what `paint` covers (painted into a 1-bit
    /// pixmap), so only the drawing covers the desktop; with one, the whole window (its transparent
    /// pixels blend away).
    ///
    /// The corresponding C functions are `XShapeCombineRectangles`, `XCreatePixmap`,
    /// `cairo_xlib_surface_create_for_bitmap` and `XShapeCombineMask` (ShapeBounding).
    private func setBoundingShape(_ dpy: OpaquePointer) throws(X11Error) {
        if composited {
            var whole = XRectangle(x: 0, y: 0, width: UInt16(clamping: rect.width), height: UInt16(clamping: rect.height))
            XShapeCombineRectangles(dpy, window, ShapeBounding, 0, 0, &whole, 1, ShapeSet, Unsorted)
            return
        }
        if maskSurface == nil {
            let w = UInt32(max(1, rect.width)), h = UInt32(max(1, rect.height))
            maskPixmap = XCreatePixmap(dpy, window, w, h, 1)
            guard maskPixmap != 0 else { throw .requestFailed("XCreatePixmap") }
            maskSurface = cairo_xlib_surface_create_for_bitmap(
                dpy, maskPixmap, XScreenOfDisplay(dpy, display.screen), Int32(w), Int32(h))
        }
        guard let maskSurface, let cr = cairo_create(maskSurface) else { throw .requestFailed("cairo_create") }
        paint(cr, mask: true)
        cairo_destroy(cr)
        cairo_surface_flush(maskSurface)
        XShapeCombineMask(dpy, window, ShapeBounding, 0, 0, maskPixmap, ShapeSet)
    }

    /// Frees the shape mask (on resize and destroy).
    private func freeMask(_ dpy: OpaquePointer?) {
        if let maskSurface { cairo_surface_destroy(maskSurface) }
        maskSurface = nil
        if maskPixmap != 0, let dpy { XFreePixmap(dpy, maskPixmap) }
        maskPixmap = 0
    }

    /// Another window was mapped or restacked: the overlay, when shown, goes back on top.
    ///
    /// The corresponding C functions are `XRaiseWindow` and `XFlush`.
    public func raiseIfShown() throws(X11Error) {
        guard mapped else { return }
        let dpy = try display.display()
        XRaiseWindow(dpy, window)
        XFlush(dpy)
    }

    /// Destroys the window and its resources. Safe to call twice; call it before closing the display.
    ///
    /// The corresponding C functions are `cairo_surface_destroy`, `XDestroyWindow`, `XFreeColormap`
    /// and `XFlush`.
    public func destroy() {
        guard window != 0 else { return }
        if let surface { cairo_surface_destroy(surface) }
        surface = nil
        freeMask(try? display.display())
        if let dpy = try? display.display() {
            XDestroyWindow(dpy, window)
            if colormap != 0 { XFreeColormap(dpy, colormap) }
            XFlush(dpy)
        }
        window = 0
        colormap = 0
        display.overlayWindow = 0
    }
}
