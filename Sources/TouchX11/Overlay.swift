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
/// It renders what the core says is shown: one `OverlayScene` (TouchCore's model of the circles, the laser
/// dot and its trail, the drawings, strokes by identity) takes the actions in, and the window is redrawn
/// once per batch, only when the scene changed: an idle overlay costs nothing. Drawing is cairo, antialiased.
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
    private var window: XWindow?
    /// Whether the window has a 32-bit ARGB visual (and its own colormap).
    private let argb: Bool
    /// The window's visual (the drawing layer is a pixmap of its depth).
    private let visual: XVisual
    /// Cairo's surface on the window; destroyed before the window.
    private var surface: CairoSurface?
    private var rect: PixelRect
    /// Whether a compositor blends ARGB windows (checked at creation and on every redraw).
    public private(set) var composited = false
    private var mapped = false
    private var dirty = false
    private var redrawsSinceCheck = 0

    /// What is shown (the core's actions applied), and what changed in the drawings since the layers
    /// were last painted, in order.
    private var scene = OverlayScene()
    private var changes: [OverlayScene.Change] = []

    /// Every stroke is to be painted into the layers again (they are new, or a clear emptied them).
    private var repaintLayers = true
    /// The whole window is to be composited again (it was mapped, made, or its shape changed kind).
    private var composeAll = true
    /// The boxes (screen pixels) the last frame drew its transient items in.
    private var shownItems: [PixelBox] = []
    /// The drawing layer: a pixmap of the window's depth with every stroke painted, and cairo's
    /// surface on it (destroyed before the pixmap). Made at the first stroke.
    private var layer: (pixmap: XPixmap, surface: CairoSurface)?
    /// Without a compositor: the drawings' shape (a 1-bit pixmap, the strokes 2 px wider, no
    /// antialiasing), and cairo's surface on it. Valid while `layerMaskValid`.
    private var layerMask: (pixmap: XPixmap, surface: CairoSurface)?
    private var layerMaskValid = false
    /// Without a compositor: a 1-bit pixmap the frame's shape (the drawings' shape and the items) is
    /// kept in, to become the bounding shape, and cairo's surface on it (destroyed before the pixmap).
    private var mask: (pixmap: XPixmap, surface: CairoSurface)?
    /// A pixmap of the window's depth each frame is put together in before one copy to the window,
    /// and cairo's surface on it.
    private var frame: (pixmap: XPixmap, surface: CairoSurface)?
    /// Stroke width: 6 px (a finger's; the pen's follows its pressure, up to `maxStrokeWidth`).
    public static let strokeWidth = OverlayScene.strokeWidth
    /// The widest stroke: 12 px (`PresenterMode.penWidthMax`).
    public static let maxStrokeWidth = PresenterMode.penWidthMax
    /// How far from a point its stroke can paint: half the widest stroke, the mask's 2 px, 1 px of
    /// antialiasing, and the half pixel of pixel centres, rounded up.
    private static let strokeReach = 10

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
    private func liveWindow() throws(X11Error) -> XWindow {
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

    /// Takes the overlay actions among `actions` into the scene, then redraws once if it changed.
    public func perform(_ actions: [OutputAction]) throws(X11Error) {
        for action in actions {
            guard case .overlay(let o) = action else { continue }
            // The window itself is `X11Overlay`'s: it makes, moves and destroys it.
            if case .cover = o { continue }
            if case .remove = o { continue }
            scene.apply(o, changes: &changes)
            dirty = true
        }
        if let i = changes.lastIndex(where: { if case .cleared = $0 { true } else { false } }) {
            // Every stroke is painted again: what changed before the clear is moot.
            changes.removeSubrange(...i)
            repaintLayers = true
        }
        try redrawIfNeeded()
    }

    /// The X server says parts of the window lost their contents (`rects`, window coordinates): they
    /// are composited again from the layer, with the transient items over them.
    public func exposed(_ rects: [PixelRect]) throws(X11Error) {
        guard mapped, !scene.isEmpty else { return }
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
        if scene.isEmpty {
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

    /// Brings the drawing layers up to date: every stroke painted again when `repaintLayers`, else the
    /// changes since the last frame. Returns the boxes (screen pixels) that changed.
    private func updateLayers() throws(X11Error) -> [PixelBox] {
        let shaped = !composited
        if scene.totalPoints == 0 && layer == nil {
            // Nothing ever drawn: no layer is needed yet.
            changes.removeAll()
            repaintLayers = false
            return []
        }
        let window = try liveWindow()
        if layer == nil {
            let pixmap = try display.createPixmap(on: window, width: Int32(rect.width), height: Int32(rect.height), depth: visual.depth)
            do {
                layer = (pixmap, try CairoSurface.xlib(display, drawable: pixmap, visual: visual, width: pixmap.width, height: pixmap.height))
            } catch {
                display.freePixmap(pixmap)
                throw error
            }
            repaintLayers = true
        }
        if shaped && layerMask == nil {
            layerMask = try bitmap(on: window)
            layerMaskValid = false
        }
        if shaped && !layerMaskValid { repaintLayers = true }
        guard let layer else { return [] }
        if repaintLayers {
            repaintLayers = false
            changes.removeAll()
            try paintAll(on: layer.surface, mask: false)
            if shaped, let layerMask {
                try paintAll(on: layerMask.surface, mask: true)
                layerMaskValid = true
            } else {
                layerMaskValid = false
            }
            composeAll = true
            return []
        }
        guard !changes.isEmpty else { return [] }
        let damage = try apply(changes, on: layer.surface, mask: false)
        if shaped, let layerMask { _ = try apply(changes, on: layerMask.surface, mask: true) } else { layerMaskValid = false }
        changes.removeAll(keepingCapacity: true)
        return damage
    }

    /// A 1-bit pixmap the size of the window, and cairo's surface on it.
    private func bitmap(on window: XWindow) throws(X11Error) -> (pixmap: XPixmap, surface: CairoSurface) {
        let pixmap = try display.createPixmap(on: window, width: Int32(rect.width), height: Int32(rect.height), depth: 1)
        do {
            return (pixmap, try CairoSurface.xlibBitmap(display, bitmap: pixmap))
        } catch {
            display.freePixmap(pixmap)
            throw error
        }
    }

    /// Window coordinates of a pixel's centre.
    private func wx(_ p: PixelPoint) -> (Double, Double) { (Double(p.x - rect.x) + 0.5, Double(p.y - rect.y) + 0.5) }

    /// How strokes are drawn: round caps and joins (so a polyline is the union of its segments, each
    /// drawn alone: new segments are), 6 px wide; for the shape `mask` 2 px wider on each side and not
    /// antialiased (the window's antialiased edges stay inside the shape).
    private func strokeStyle(_ cr: borrowing CairoContext, mask: Bool) {
        cr.setAntialias(mask ? .none : .good)
        cr.setOperator(.over)
        cr.setLineCap(round: true)
        cr.setLineJoin(round: true)
        cr.setLineWidth(Self.strokeWidth + (mask ? 4 : 0))
    }

    /// A stroke's colour: finished strokes in the slot's colour, strokes in progress lighter (halfway
    /// to white). Always opaque: segments are stroked one by one, and each overlaps the one before at
    /// its round end, which would show as a darker bead at every joint if they were translucent.
    private func strokeColour(_ cr: borrowing CairoContext, slot: UInt8, inProgress: Bool, mask: Bool) {
        let (r, g, b) = Self.slotColours[Int(slot) % Self.slotColours.count]
        if inProgress && !mask {
            cr.setSource(red: r + (1 - r) * 0.5, green: g + (1 - g) * 0.5, blue: b + (1 - b) * 0.5, alpha: 1)
        } else {
            cr.setSource(red: r, green: g, blue: b, alpha: 1)
        }
    }

    /// Clears `surface` and paints every stroke on it, in the order they began.
    private func paintAll(on surface: CairoSurface, mask: Bool) throws(X11Error) {
        let cr = try CairoContext(surface)
        cr.setOperator(.source)
        cr.setSource(red: 0, green: 0, blue: 0, alpha: 0)
        cr.paint()
        strokeStyle(cr, mask: mask)
        paintStrokes(cr, within: nil, mask: mask)
        cr.destroy()
        try surface.flush()
    }

    /// Paints the strokes, or only their segments that reach into `box` (screen pixels; the caller
    /// clips to it), in the order they began.
    private func paintStrokes(_ cr: borrowing CairoContext, within box: PixelBox?, mask: Bool) {
        let reach = Self.strokeReach
        for stroke in scene.strokes where !stroke.points.isEmpty {
            if let box, let bounds = stroke.bounds, !bounds.grown(by: reach).intersects(box) { continue }
            if stroke.varying {
                paintVarying(cr, stroke, within: box, mask: mask)
                continue
            }
            cr.setLineWidth(stroke.widths[0] + (mask ? 4 : 0))
            cr.newPath()
            let points = stroke.points
            let (x0, y0) = wx(points[0])
            if points.count == 1 {
                cr.move(toX: x0, y: y0)
                cr.line(toX: x0, y: y0)  // a dot: a round cap
            } else if let box {
                // Only the segments near the box, each run of them as one sub-path.
                var open = false
                for k in 1..<points.count {
                    let a = points[k - 1], b = points[k]
                    let seg = PixelBox(around: a, reach: reach).union(PixelBox(around: b, reach: reach))
                    guard seg.intersects(box) else { open = false; continue }
                    if !open {
                        let (ax, ay) = wx(a)
                        cr.move(toX: ax, y: ay)
                        open = true
                    }
                    let (bx, by) = wx(b)
                    cr.line(toX: bx, y: by)
                }
            } else {
                cr.move(toX: x0, y: y0)
                for p in points.dropFirst() { let (x, y) = wx(p); cr.line(toX: x, y: y) }
            }
            strokeColour(cr, slot: stroke.slot, inProgress: stroke.inProgress, mask: mask)
            cr.stroke()
        }
    }

    /// A stroke whose width varies (the pen's): each segment stroked alone, as wide as its end point
    /// (opaque, so the round ends overlap without beads); only those near `box` when given.
    private func paintVarying(_ cr: borrowing CairoContext, _ stroke: OverlayScene.Stroke, within box: PixelBox?, mask: Bool) {
        let reach = Self.strokeReach
        strokeColour(cr, slot: stroke.slot, inProgress: stroke.inProgress, mask: mask)
        let points = stroke.points
        for k in 0..<points.count {
            let a = points[max(0, k - 1)], b = points[k]
            if let box, !PixelBox(around: a, reach: reach).union(PixelBox(around: b, reach: reach)).intersects(box) { continue }
            cr.setLineWidth(stroke.widths[k] + (mask ? 4 : 0))
            cr.newPath()
            let (ax, ay) = wx(a), (bx, by) = wx(b)
            cr.move(toX: ax, y: ay)
            cr.line(toX: bx, y: by)
            cr.stroke()
        }
    }

    /// Paints `changes` on a layer (or its shape, `mask`); returns the boxes (screen pixels) that changed.
    private func apply(_ changes: [OverlayScene.Change], on surface: CairoSurface, mask: Bool) throws(X11Error) -> [PixelBox] {
        var damage: [PixelBox] = []
        let reach = Self.strokeReach
        let cr = try CairoContext(surface)
        strokeStyle(cr, mask: mask)
        for change in changes {
            switch change {
            case .segment(let slot, let from, let to, let width):
                let (bx, by) = wx(to)
                cr.setLineWidth(width + (mask ? 4 : 0))
                cr.newPath()
                if let from {
                    let (ax, ay) = wx(from)
                    cr.move(toX: ax, y: ay)
                } else {
                    cr.move(toX: bx, y: by)
                }
                cr.line(toX: bx, y: by)
                strokeColour(cr, slot: slot, inProgress: true, mask: mask)
                cr.stroke()
                damage.append(PixelBox(around: to, reach: reach).union(PixelBox(around: from ?? to, reach: reach)))
            case .finished(let id):
                // Its shape is what it was: only its colour changes.
                guard !mask, let i = scene.index(of: id), case let stroke = scene.strokes[i], let first = stroke.points.first,
                      let bounds = stroke.bounds else { continue }
                damage.append(bounds.grown(by: reach))
                if stroke.varying {
                    paintVarying(cr, stroke, within: nil, mask: false)
                    continue
                }
                cr.setLineWidth(stroke.widths[0])
                cr.newPath()
                let (x0, y0) = wx(first)
                cr.move(toX: x0, y: y0)
                if stroke.points.count == 1 { cr.line(toX: x0, y: y0) }
                for p in stroke.points.dropFirst() { let (x, y) = wx(p); cr.line(toX: x, y: y) }
                strokeColour(cr, slot: stroke.slot, inProgress: false, mask: false)
                cr.stroke()
            case .erased(let bounds):
                let box = bounds.grown(by: reach)
                cr.save()
                cr.newPath()
                let w = box.offset(by: -Int(rect.x), -Int(rect.y))
                cr.rectangle(x: Double(w.x0), y: Double(w.y0), width: Double(w.x1 - w.x0), height: Double(w.y1 - w.y0))
                cr.clip()
                cr.setOperator(.source)
                cr.setSource(red: 0, green: 0, blue: 0, alpha: 0)
                cr.paint()
                cr.setOperator(.over)
                paintStrokes(cr, within: box, mask: mask)
                cr.restore()
                damage.append(box)
            case .cleared:
                continue  // taken by `perform`: every stroke is painted again
            }
        }
        cr.destroy()
        try surface.flush()
        return damage
    }

    /// The boxes (screen pixels) the transient items cover now: circles, the trail, the laser dot.
    private func itemBoxes() -> [PixelBox] {
        var boxes: [PixelBox] = []
        // A circle's radius, its 3 px outline, the mask's 2 px and antialiasing.
        let circleReach = Int(Self.circleRadius) + 6
        let dotReach = Int(Self.laserRadius) + 5
        for s in 0..<10 { if let c = scene.circles[s] { boxes.append(PixelBox(around: c.at, reach: circleReach)) } }
        for p in scene.trail { boxes.append(PixelBox(around: p, reach: dotReach)) }
        if let laser = scene.laser { boxes.append(PixelBox(around: laser, reach: dotReach)) }
        return boxes
    }

    /// Copies the drawing layer into the window over `boxes` (window coordinates), and paints the
    /// transient items over it there.
    ///
    /// Through the wrappers: `cairo_rectangle`, `cairo_clip`, `cairo_set_source_surface`, `cairo_paint`.
    ///
    /// The frame is put together in a pixmap first and reaches the window in one copy: every request
    /// drawing on a shaped window makes the X server copy the window's clip region (as many
    /// rectangles as its shape holds: a large drawing's shape holds many), so one request per frame
    /// rather than one per circle and dot.
    private func compose(_ boxes: [PixelBox]) throws(X11Error) {
        guard let surface else { throw .requestFailed("cairo_create") }
        if frame == nil {
            let pixmap = try display.createPixmap(on: try liveWindow(), width: Int32(rect.width), height: Int32(rect.height), depth: visual.depth)
            do {
                frame = (pixmap, try CairoSurface.xlib(display, drawable: pixmap, visual: visual, width: pixmap.width, height: pixmap.height))
            } catch {
                display.freePixmap(pixmap)
                throw error
            }
        }
        guard let frame else { return }
        try compose(frame.surface, within: boxes, layer: scene.totalPoints > 0 ? layer?.surface : nil, mask: false)
        let cr = try CairoContext(surface)
        clip(cr, to: boxes)
        cr.setOperator(.source)
        try cr.setSource(frame.surface, x: 0, y: 0)
        cr.paint()
        cr.destroy()
        try surface.flush()
    }

    /// Limits `cr` to `boxes` (window coordinates), clamped to the window.
    private func clip(_ cr: borrowing CairoContext, to boxes: [PixelBox]) {
        cr.newPath()
        let w = Int(rect.width), h = Int(rect.height)
        for b in boxes {
            let x0 = max(0, b.x0), y0 = max(0, b.y0), x1 = min(w, b.x1), y1 = min(h, b.y1)
            guard x0 < x1, y0 < y1 else { continue }
            cr.rectangle(x: Double(x0), y: Double(y0), width: Double(x1 - x0), height: Double(y1 - y0))
        }
        cr.clip()
    }

    /// Paints the transient items (circles, the trail, the laser dot) in window coordinates. For the
    /// shape `mask`, opaque, not antialiased and 2 px larger (antialiased edges stay inside the shape).
    private func paintItems(_ cr: borrowing CairoContext, mask: Bool) {
        let grow = mask ? 2.0 : 0
        // Translucent only where a compositor blends; opaque otherwise (the shape does the cutting).
        let soft = composited && !mask
        cr.setAntialias(mask ? .none : .good)
        cr.setOperator(.over)
        for slot in 0..<10 {
            guard let c = scene.circles[slot] else { continue }
            let (r, g, b) = Self.slotColours[slot % Self.slotColours.count]
            let a = Double(c.alpha) / 255
            // The circle shrinks as it fades too, so a fade shows without a compositor as well.
            let radius = Self.circleRadius * (0.5 + 0.5 * a)
            let (x, y) = wx(c.at)
            cr.newPath()
            cr.circle(x: x, y: y, radius: radius + grow)
            cr.setSource(red: r, green: g, blue: b, alpha: soft ? 0.45 * a : 1)
            cr.fillPreserve()
            cr.setLineWidth(3)
            cr.setSource(red: r * 0.6, green: g * 0.6, blue: b * 0.6, alpha: soft ? 0.9 * a : 1)
            cr.stroke()
        }
        let trail = scene.trail
        for (i, p) in trail.enumerated() {
            let f = Double(i + 1) / Double(trail.count + 1)
            let (x, y) = wx(p)
            cr.newPath()
            cr.circle(x: x, y: y, radius: Self.laserRadius * (0.3 + 0.6 * f) + grow)
            cr.setSource(red: 1, green: 0.1, blue: 0.1, alpha: soft ? 0.6 * f : 1)
            cr.fill()
        }
        if let p = scene.laser {
            let (x, y) = wx(p)
            // Like a circle, the dot shrinks as it fades, so the fade shows without a compositor too.
            let a = Double(scene.laserAlpha) / 255
            cr.newPath()
            cr.circle(x: x, y: y, radius: Self.laserRadius * (0.5 + 0.5 * a) + grow)
            cr.setSource(red: 1, green: 0, blue: 0, alpha: soft ? a : 1)
            cr.fill()
        }
    }

    /// Without a compositor, the window's bounding shape is what is drawn: the frame's 1-bit pixmap
    /// takes, over `boxes` (window coordinates), the drawings' shape and the items (2 px larger), and
    /// becomes the shape, so only the drawing covers the desktop. With a compositor, the whole window
    /// (its transparent pixels blend away).
    ///
    /// Through the wrappers: `XShapeCombineRectangles`, `XCreatePixmap`,
    /// `cairo_xlib_surface_create_for_bitmap` and `XShapeCombineMask` (ShapeBounding).
    private func setBoundingShape(_ window: XWindow, over boxes: [PixelBox]) throws(X11Error) {
        if composited {
            if composeAll {
                try display.setShape(.bounding, of: window, toRectangle: (Int32(rect.width), Int32(rect.height)))
            }
            return
        }
        var boxes = boxes
        if mask == nil {
            mask = try bitmap(on: window)
            boxes = [PixelBox(x0: 0, y0: 0, x1: Int(rect.width), y1: Int(rect.height))]
        }
        guard let mask else { return }
        try compose(mask.surface, within: boxes, layer: layerMaskValid && scene.totalPoints > 0 ? layerMask?.surface : nil, mask: true)
        try display.setShape(.bounding, of: window, toMask: mask.pixmap)
    }

    /// Paints `target` anew within `boxes`: the strokes' `layer` (nothing where there is none), then the
    /// live items (circles, the laser dot, strokes in progress); as colour, or as the shape's mask.
    private func compose(_ target: CairoSurface, within boxes: [PixelBox], layer: CairoSurface?, mask: Bool) throws(X11Error) {
        let cr = try CairoContext(target)
        clip(cr, to: boxes)
        cr.setOperator(.source)
        if let layer {
            try cr.setSource(layer, x: 0, y: 0)
        } else {
            cr.setSource(red: 0, green: 0, blue: 0, alpha: 0)
        }
        cr.paint()
        paintItems(cr, mask: mask)
        cr.destroy()
        try target.flush()
    }

    /// Frees the layers and the shape mask (on resize and destroy): each surface, then its pixmap.
    /// Everything is painted again when next drawn.
    private func freeLayers() {
        for case let bitmap? in [mask, layerMask, layer, frame] {
            bitmap.surface.destroy()
            display.freePixmap(bitmap.pixmap)
        }
        mask = nil
        frame = nil
        layerMask = nil
        layer = nil
        layerMaskValid = false
        repaintLayers = true
        composeAll = true
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
