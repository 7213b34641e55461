import CX11
import TouchCore

// The overlay's cairo painting: strokes (whole, near a box, or only the new segments) and the transient
// items (circles, the laser dot and its trail), as colour or as the shape's 1-bit mask.

extension Overlay {
    /// Window coordinates of a pixel's centre.
    func wx(_ p: PixelPoint) -> (Double, Double) { (Double(p.x - rect.x) + 0.5, Double(p.y - rect.y) + 0.5) }

    /// How strokes are drawn: round caps and joins (so a polyline is the union of its segments, each
    /// drawn alone: new segments are), 6 px wide; for the shape `mask` 2 px wider on each side and not
    /// antialiased (the window's antialiased edges stay inside the shape).
    func strokeStyle(_ cr: borrowing CairoContext, mask: Bool) {
        cr.setAntialias(mask ? .none : .good)
        cr.setOperator(.over)
        cr.setLineCap(round: true)
        cr.setLineJoin(round: true)
        cr.setLineWidth(Self.strokeWidth + (mask ? 4 : 0))
    }

    /// The colour of what `place`'s person draws with finger `slot`: person 1's a colour per finger
    /// (`slotColours`), a further person's their own (`Person.colour`).
    static func colour(place: Int, slot: Int) -> (Double, Double, Double) {
        if place == 0 { return slotColours[slot % slotColours.count] }
        let c = Person(rawValue: UInt8(place + 1)).colour
        return (c.red, c.green, c.blue)
    }

    /// A stroke's colour: finished strokes in their colour (`colour(place:slot:)`), strokes in progress
    /// lighter (halfway to white). Always opaque: segments are stroked one by one, and each overlaps the
    /// one before at its round end, which would show as a darker bead at every joint if they were translucent.
    func strokeColour(_ cr: borrowing CairoContext, place: Int, slot: UInt8, inProgress: Bool, mask: Bool) {
        let (r, g, b) = Self.colour(place: place, slot: Int(slot))
        if inProgress && !mask {
            cr.setSource(red: r + (1 - r) * 0.5, green: g + (1 - g) * 0.5, blue: b + (1 - b) * 0.5, alpha: 1)
        } else {
            cr.setSource(red: r, green: g, blue: b, alpha: 1)
        }
    }

    /// Clears `surface` and paints every stroke on it, in the order they began.
    func paintAll(on surface: CairoSurface, mask: Bool) throws(X11Error) {
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
    /// clips to it): each person's in the order they began, person 1's first.
    func paintStrokes(_ cr: borrowing CairoContext, within box: PixelBox?, mask: Bool) {
        let reach = Self.strokeReach
        for (place, scene) in scenes.enumerated() {
            for stroke in scene.strokes where !stroke.points.isEmpty {
                if let box, let bounds = stroke.bounds, !bounds.grown(by: reach).intersects(box) { continue }
                if stroke.varying {
                    paintVarying(cr, stroke, place: place, within: box, mask: mask)
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
                strokeColour(cr, place: place, slot: stroke.slot, inProgress: stroke.inProgress, mask: mask)
                cr.stroke()
            }
        }
    }

    /// A stroke whose width varies (the pen's): each segment stroked alone, as wide as its end point
    /// (opaque, so the round ends overlap without beads); only those near `box` when given.
    func paintVarying(_ cr: borrowing CairoContext, _ stroke: OverlayScene.Stroke, place: Int, within box: PixelBox?, mask: Bool) {
        let reach = Self.strokeReach
        strokeColour(cr, place: place, slot: stroke.slot, inProgress: stroke.inProgress, mask: mask)
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
    func apply(_ changes: [(place: Int, change: OverlayScene.Change)], on surface: CairoSurface, mask: Bool) throws(X11Error) -> [PixelBox] {
        var damage: [PixelBox] = []
        let reach = Self.strokeReach
        let cr = try CairoContext(surface)
        strokeStyle(cr, mask: mask)
        for (place, change) in changes {
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
                strokeColour(cr, place: place, slot: slot, inProgress: true, mask: mask)
                cr.stroke()
                damage.append(PixelBox(around: to, reach: reach).union(PixelBox(around: from ?? to, reach: reach)))
            case .finished(let id):
                // Its shape is what it was: only its colour changes.
                guard !mask, place < scenes.count, let i = scenes[place].index(of: id), case let stroke = scenes[place].strokes[i],
                      let first = stroke.points.first, let bounds = stroke.bounds else { continue }
                damage.append(bounds.grown(by: reach))
                if stroke.varying {
                    paintVarying(cr, stroke, place: place, within: nil, mask: false)
                    continue
                }
                cr.setLineWidth(stroke.widths[0])
                cr.newPath()
                let (x0, y0) = wx(first)
                cr.move(toX: x0, y: y0)
                if stroke.points.count == 1 { cr.line(toX: x0, y: y0) }
                for p in stroke.points.dropFirst() { let (x, y) = wx(p); cr.line(toX: x, y: y) }
                strokeColour(cr, place: place, slot: stroke.slot, inProgress: false, mask: false)
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

    /// Paints the transient items (circles, the trail, the laser dot) in window coordinates, each
    /// person's. For the shape `mask`, opaque, not antialiased and 2 px larger (antialiased edges stay
    /// inside the shape). A further person's circles and dot are ringed in white, so that they are told
    /// from person 1's fingers of a like colour.
    func paintItems(_ cr: borrowing CairoContext, mask: Bool) {
        let grow = mask ? 2.0 : 0
        // Translucent only where a compositor blends; opaque otherwise (the shape does the cutting).
        let soft = composited && !mask
        cr.setAntialias(mask ? .none : .good)
        cr.setOperator(.over)
        for (place, scene) in scenes.enumerated() where !scene.isEmpty {
            for slot in 0..<10 {
                guard let c = scene.circles[slot] else { continue }
                let (r, g, b) = Self.colour(place: place, slot: slot)
                let a = Double(c.alpha) / 255
                // The circle shrinks as it fades too, so a fade shows without a compositor as well.
                let radius = Self.circleRadius * (0.5 + 0.5 * a)
                let (x, y) = wx(c.at)
                cr.newPath()
                cr.circle(x: x, y: y, radius: radius + grow)
                cr.setSource(red: r, green: g, blue: b, alpha: soft ? 0.45 * a : 1)
                cr.fillPreserve()
                cr.setLineWidth(3)
                if place == 0 {
                    cr.setSource(red: r * 0.6, green: g * 0.6, blue: b * 0.6, alpha: soft ? 0.9 * a : 1)
                } else {
                    cr.setSource(red: 1, green: 1, blue: 1, alpha: soft ? 0.9 * a : 1)
                }
                cr.stroke()
            }
            // Person 1's laser is red, a further person's their colour.
            let c = Person(rawValue: UInt8(place + 1)).colour
            let trail = scene.trail
            for (i, p) in trail.enumerated() {
                let f = Double(i + 1) / Double(trail.count + 1)
                let (x, y) = wx(p)
                cr.newPath()
                cr.circle(x: x, y: y, radius: Self.laserRadius * (0.3 + 0.6 * f) + grow)
                if place == 0 {
                    cr.setSource(red: 1, green: 0.1, blue: 0.1, alpha: soft ? 0.6 * f : 1)
                } else {
                    cr.setSource(red: c.red, green: c.green, blue: c.blue, alpha: soft ? 0.6 * f : 1)
                }
                cr.fill()
            }
            if let p = scene.laser {
                let (x, y) = wx(p)
                // Like a circle, the dot shrinks as it fades, so the fade shows without a compositor too.
                let a = Double(scene.laserAlpha) / 255
                cr.newPath()
                cr.circle(x: x, y: y, radius: Self.laserRadius * (0.5 + 0.5 * a) + grow)
                cr.setSource(red: c.red, green: c.green, blue: c.blue, alpha: soft ? a : 1)
                if place == 0 {
                    cr.fill()
                } else {
                    cr.fillPreserve()
                    cr.setLineWidth(2)
                    cr.setSource(red: 1, green: 1, blue: 1, alpha: soft ? a : 1)
                    cr.stroke()
                }
            }
        }
    }
}
