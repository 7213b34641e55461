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
/// It renders what the core says is shown: an `OverlayScene` per person (TouchCore's model of the circles,
/// the laser dot and its trail, the drawings, strokes by identity) takes that person's actions in, and the
/// window is redrawn once per batch, only when a scene changed: an idle overlay costs nothing. Person 1's
/// are drawn in a colour per finger and a red laser, a further person's in their own colour
/// (`Person.colour`). Drawing is cairo, antialiased.
///
/// What a frame costs this process does not grow with what was drawn. The drawings are kept rendered
/// in a layer of their own, an X pixmap the size of the window (and, without a compositor, a 1-bit
/// pixmap of their shape): a new segment is stroked into it on its own, a finished stroke once more in
/// its full colour. A frame then copies that layer (server side) into a frame pixmap, only over what
/// changed (the new segments, and where the transient items, circles, the laser dot and its trail,
/// were and are), paints those items over it there, and copies those boxes into the window in one
/// request. Without a compositor the frame's shape is made the same way: a 1-bit pixmap, updated from
/// the drawing's shape and the items over the same boxes, then set as the bounding shape. Every stroke
/// is painted again only when the layers are made (first drawing, a resize, a compositor coming or
/// going) or on a clear; a dropped stroke's box alone is painted again from the strokes that cross it.
/// An `Expose` composites its rectangles again, from the layer.
///
/// What still grows, without a compositor, is the X server's own work on a shaped window: setting the
/// shape, and every request drawing on the window, handles its region, as many rectangles as the
/// drawing's shape holds. Hence one request on the window per frame, and no window background (see
/// `XDisplay.createWindow`).
///
/// The drawings are bounded by the core (`DrawingStore`: `.strokeGone`); the scene's own bound
/// (`OverlayScene.pointGuard`) is only a backstop.
///
/// Resources are released explicitly with `destroy()` (on every exit path, before the display is
/// closed); `deinit` asserts that happened.
public final class Overlay {
    public let display: XDisplay
    /// The window (owning its colormap when ARGB); nil once destroyed.
    var window: XWindow?
    /// Whether the window has a 32-bit ARGB visual (and its own colormap).
    let argb: Bool
    /// The window's visual (the drawing layer is a pixmap of its depth).
    let visual: XVisual
    /// Cairo's surface on the window; destroyed before the window.
    var surface: CairoSurface?
    var rect: PixelRect
    /// Whether a compositor blends ARGB windows (checked at creation and on every redraw).
    public private(set) var composited = false
    var mapped = false
    var dirty = false
    var redrawsSinceCheck = 0

    /// What is shown, a scene per person (index: the person's number less one; the core's actions
    /// applied, each person's Bridge's to their own), and what changed in the drawings since the layers
    /// were last painted, in order, with whose scene it was.
    var scenes: [OverlayScene] = [OverlayScene()]
    var changes: [(place: Int, change: OverlayScene.Change)] = []
    /// One call's changes, before they are tagged with their place (kept, not to allocate per call).
    private var pending: [OverlayScene.Change] = []

    /// Every stroke is to be painted into the layers again (they are new, or a clear emptied them).
    var repaintLayers = true
    /// The whole window is to be composited again (it was mapped, made, or its shape changed kind).
    var composeAll = true
    /// The boxes (screen pixels) the last frame drew its transient items in.
    var shownItems: [PixelBox] = []
    /// The drawing layer: a pixmap of the window's depth with every stroke painted, and cairo's
    /// surface on it (destroyed before the pixmap). Made at the first stroke.
    var layer: (pixmap: XPixmap, surface: CairoSurface)?
    /// Without a compositor: the drawings' shape (a 1-bit pixmap, the strokes 2 px wider, no
    /// antialiasing), and cairo's surface on it. Valid while `layerMaskValid`.
    var layerMask: (pixmap: XPixmap, surface: CairoSurface)?
    var layerMaskValid = false
    /// Without a compositor: a 1-bit pixmap the frame's shape (the drawings' shape and the items) is
    /// kept in, to become the bounding shape, and cairo's surface on it (destroyed before the pixmap).
    var mask: (pixmap: XPixmap, surface: CairoSurface)?
    /// A pixmap of the window's depth each frame is put together in before one copy to the window,
    /// and cairo's surface on it.
    var frame: (pixmap: XPixmap, surface: CairoSurface)?
    /// Stroke width: 6 px (a finger's; the pen's follows its pressure, up to `maxStrokeWidth`).
    public static let strokeWidth = OverlayScene.strokeWidth
    /// The widest stroke: 12 px (`PresenterMode.penWidthMax`).
    public static let maxStrokeWidth = PresenterMode.penWidthMax
    /// How far from a point its stroke can paint: half the widest stroke, the mask's 2 px, 1 px of
    /// antialiasing, and the half pixel of pixel centres, rounded up.
    static let strokeReach = 10

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
    /// `XCreateWindow`, `XSelectInput` (the root's `SubstructureNotifyMask`, to stay on top; the
    /// window's `ExposureMask`, to draw again what it lost), `XShapeCombineRectangles` (input shape
    /// emptied), `XStoreName`, `cairo_xlib_surface_create`, `XInternAtom` and `XGetSelectionOwner`. A
    /// throw leaves nothing behind.
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
            // Told when the window loses part of its contents (drawn incrementally, it must say so).
            try display.selectInput(on: window.id, [.exposure])
            // Never eat input: an empty input shape lets every click through to the window below.
            try display.setShape(.input, of: window, toRectangle: nil)
            try display.setName(of: window, "touchbridge overlay")
            surface = try CairoSurface.xlib(display, drawable: window, visual: visual,
                                            width: Int32(rect.width), height: Int32(rect.height))
            composited = try display.hasCompositor() && argbVisual != nil
        } catch {
            surface?.destroy()
            display.destroyWindow(window)
            throw error
        }
        self.surface = surface
        self.argb = argbVisual != nil
        self.visual = visual
        self.window = window
        display.overlayWindow = window.id.rawValue
    }

    deinit {
        assert(window == nil, "Overlay was not destroyed: call destroy() on every exit path")
    }

    /// The window, or `.closed` once destroyed.
    func liveWindow() throws(X11Error) -> XWindow {
        guard let window else { throw .closed }
        return window
    }

    /// Covers `rect` from now on (the mapped monitor changed): the layers are made again at the new
    /// size and everything is painted again.
    ///
    /// Through `XDisplay`'s wrappers: `XMoveResizeWindow` and `cairo_xlib_surface_set_size`.
    public func setRect(_ new: PixelRect) throws(X11Error) {
        guard new != rect else { return }
        let window = try liveWindow()
        try display.moveResize(window, to: new)
        rect = new
        try surface?.setSize(width: Int32(new.width), height: Int32(new.height))
        freeLayers()
        dirty = true
        try redrawIfNeeded()
    }

    /// Takes `person`'s overlay actions among `actions` into their scene, then redraws once if it changed.
    public func perform(_ actions: [OutputAction], as person: Person = .first) throws(X11Error) {
        let k = place(of: person)
        for action in actions {
            guard case .overlay(let o) = action else { continue }
            // The window itself is `X11Overlay`'s: it makes, moves and destroys it.
            if case .cover = o { continue }
            if case .remove = o { continue }
            scenes[k].apply(o, changes: &pending)
            dirty = true
        }
        for change in pending { changes.append((k, change)) }
        pending.removeAll(keepingCapacity: true)
        if let i = changes.lastIndex(where: { if case .cleared = $0.change { true } else { false } }) {
            // Every stroke is painted again: what changed before the clear is moot.
            changes.removeSubrange(...i)
            repaintLayers = true
        }
        try redrawIfNeeded()
    }

    /// `person` no longer wants the overlay (their Bridge removed it while others still draw): what they
    /// showed goes, and the rest is painted again.
    public func forget(_ person: Person) throws(X11Error) {
        let k = place(of: person)
        guard !scenes[k].isEmpty else { return }
        scenes[k].removeAll()
        changes.removeAll { $0.place == k }
        repaintLayers = true
        dirty = true
        try redrawIfNeeded()
    }

    /// The index of `person`'s scene, made if they have none yet.
    private func place(of person: Person) -> Int {
        let k = max(Int(person.rawValue), 1) - 1
        while scenes.count <= k { scenes.append(OverlayScene()) }
        return k
    }

    /// Whether no person's scene shows anything.
    var showsNothing: Bool {
        for scene in scenes where !scene.isEmpty { return false }
        return true
    }

    /// The points of every person's strokes together.
    var totalPoints: Int {
        var n = 0
        for scene in scenes { n += scene.totalPoints }
        return n
    }

    /// The X server says parts of the window lost their contents (`rects`, window coordinates): they
    /// are composited again from the layer, with the transient items over them.
    public func exposed(_ rects: [PixelRect]) throws(X11Error) {
        guard mapped, !showsNothing else { return }
        let boxes = rects.map { PixelBox(x0: Int($0.x), y0: Int($0.y), x1: Int($0.x) + Int($0.width), y1: Int($0.y) + Int($0.height)) }
        try compose(boxes)
        try display.flush()
    }

    /// Redraws the scene if it changed: the drawing layers take the new segments; without a compositor
    /// the bounding shape is cut to what is drawn; the window is raised (above windows mapped since),
    /// or unmapped when empty; then the changed boxes are composited.
    ///
    /// Through the wrappers: cairo's (`cairo_create`, `cairo_arc`, `cairo_fill`, …), `XMapRaised`,
    /// `XRaiseWindow`, `XUnmapWindow` and `XFlush`.
    private func redrawIfNeeded() throws(X11Error) {
        guard dirty else { return }
        dirty = false
        let window = try liveWindow()
        if showsNothing {
            if mapped { try display.unmap(window); mapped = false }
            // Nothing drawn: the layers are cleared when next needed (cheap: no stroke to paint).
            changes.removeAll()
            repaintLayers = true
            shownItems.removeAll()
            try display.flush()
            return
        }
        // A compositor may start or stop at any time: look when the window is mapped, and every 60th
        // redraw while it stays mapped (one round trip a second at 60 packets/s, not one per packet).
        redrawsSinceCheck += 1
        if !mapped || redrawsSinceCheck >= 60 {
            redrawsSinceCheck = 0
            let was = composited
            composited = try display.hasCompositor() && argb
            if composited != was { composeAll = true }
        }
        var damage = try updateLayers()
        let items = itemBoxes()
        damage += shownItems
        damage += items
        shownItems = items
        if !mapped { composeAll = true }
        if composeAll { damage = [PixelBox(x0: Int(rect.x), y0: Int(rect.y), x1: Int(rect.x) + Int(rect.width), y1: Int(rect.y) + Int(rect.height))] }
        if damage.isEmpty {
            // Nothing that shows changed (a fade of a dot already gone, say).
            try display.flush()
            return
        }
        let windowDamage = damage.map { $0.offset(by: -Int(rect.x), -Int(rect.y)) }
        try setBoundingShape(window, over: windowDamage)
        if !mapped { try display.mapRaised(window); mapped = true } else { try display.raise(window) }
        composeAll = false
        try compose(windowDamage)
        try display.flush()
    }

    /// Another window was mapped or restacked: the overlay, when shown, goes back on top.
    ///
    /// Through the wrappers: `XRaiseWindow` and `XFlush`.
    public func raiseIfShown() throws(X11Error) {
        guard mapped else { return }
        try display.raise(try liveWindow())
        try display.flush()
    }

    /// Destroys the window and its resources: the cairo surfaces, the pixmaps, the window and its
    /// colormap, in that order (the types refuse any other). Safe to call twice; call it before
    /// closing the display.
    ///
    /// Through the wrappers: `cairo_surface_destroy`, `XFreePixmap`, `XDestroyWindow`,
    /// `XFreeColormap` and `XFlush`.
    public func destroy() {
        guard let window else { return }
        surface?.destroy()
        surface = nil
        freeLayers()
        display.destroyWindow(window)
        try? display.flush()
        self.window = nil
        display.overlayWindow = 0
    }
}
