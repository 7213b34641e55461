import CX11
import TouchCore

// The overlay's frames: the drawing layers brought up to date, the boxes that changed (the damage), and
// the frame composed from the layer and the transient items over those boxes only, then copied into the
// window in one request.

extension Overlay {
    /// Brings the drawing layers up to date: every stroke painted again when `repaintLayers`, else the
    /// changes since the last frame. Returns the boxes (screen pixels) that changed.
    func updateLayers() throws(X11Error) -> [PixelBox] {
        let shaped = !composited
        if totalPoints == 0 && layer == nil {
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
    func bitmap(on window: XWindow) throws(X11Error) -> (pixmap: XPixmap, surface: CairoSurface) {
        let pixmap = try display.createPixmap(on: window, width: Int32(rect.width), height: Int32(rect.height), depth: 1)
        do {
            return (pixmap, try CairoSurface.xlibBitmap(display, bitmap: pixmap))
        } catch {
            display.freePixmap(pixmap)
            throw error
        }
    }

    /// The boxes (screen pixels) the transient items cover now: circles, the trail, the laser dot.
    func itemBoxes() -> [PixelBox] {
        var boxes: [PixelBox] = []
        // A circle's radius, its 3 px outline, the mask's 2 px and antialiasing.
        let circleReach = Int(Self.circleRadius) + 6
        let dotReach = Int(Self.laserRadius) + 5
        for scene in scenes {
            for s in 0..<10 { if let c = scene.circles[s] { boxes.append(PixelBox(around: c.at, reach: circleReach)) } }
            for p in scene.trail { boxes.append(PixelBox(around: p, reach: dotReach)) }
            if let laser = scene.laser { boxes.append(PixelBox(around: laser, reach: dotReach)) }
        }
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
    func compose(_ boxes: [PixelBox]) throws(X11Error) {
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
        try compose(frame.surface, within: boxes, layer: totalPoints > 0 ? layer?.surface : nil, mask: false)
        let cr = try CairoContext(surface)
        clip(cr, to: boxes)
        cr.setOperator(.source)
        try cr.setSource(frame.surface, x: 0, y: 0)
        cr.paint()
        cr.destroy()
        try surface.flush()
    }

    /// Limits `cr` to `boxes` (window coordinates), clamped to the window.
    func clip(_ cr: borrowing CairoContext, to boxes: [PixelBox]) {
        cr.newPath()
        let w = Int(rect.width), h = Int(rect.height)
        for b in boxes {
            let x0 = max(0, b.x0), y0 = max(0, b.y0), x1 = min(w, b.x1), y1 = min(h, b.y1)
            guard x0 < x1, y0 < y1 else { continue }
            cr.rectangle(x: Double(x0), y: Double(y0), width: Double(x1 - x0), height: Double(y1 - y0))
        }
        cr.clip()
    }

    /// Paints `target` anew within `boxes`: the strokes' `layer` (nothing where there is none), then the
    /// live items (circles, the laser dot, strokes in progress); as colour, or as the shape's mask.
    func compose(_ target: CairoSurface, within boxes: [PixelBox], layer: CairoSurface?, mask: Bool) throws(X11Error) {
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
    func freeLayers() {
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
}
