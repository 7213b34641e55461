import CX11

// cairo on Xlib drawables: the overlay's drawing. One Swift method per cairo function, named in its
// doc comment, like the Xlib wrappers.

/// A cairo surface drawing on an X window or pixmap (`cairo_surface_t*`). It keeps its drawable alive
/// and that drawable cannot be destroyed before it: destroy the surface with `destroy()` first;
/// `deinit` asserts that happened.
public final class CairoSurface {
    private var handle: OpaquePointer?
    /// The drawable it draws on; nil for an image in memory (`image`, `wrapping`).
    private let drawable: XDrawable?

    private init(handle: OpaquePointer, drawable: XDrawable?) {
        self.handle = handle
        self.drawable = drawable
        drawable?.liveSurfaces += 1
    }

    deinit {
        assert(handle == nil, "cairo surface was not destroyed: call destroy() on every exit path")
    }

    /// A surface on `drawable` (a window, or a pixmap of the same depth as `visual`), drawn with
    /// `visual`, of `width`×`height` pixels (at least 1×1).
    ///
    /// The corresponding C function is `cairo_xlib_surface_create`.
    public static func xlib(
        _ display: XDisplay, drawable: XDrawable, visual: XVisual, width: Int32, height: Int32
    ) throws(X11Error) -> CairoSurface {
        guard let handle = cairo_xlib_surface_create(try display.display(), drawable.rawID, visual.pointer,
                                                     max(1, width), max(1, height)) else {
            throw .requestFailed("cairo_xlib_surface_create")
        }
        return CairoSurface(handle: handle, drawable: drawable)
    }

    /// A surface on `bitmap` (a pixmap of depth 1), as large as the pixmap: what is painted on it
    /// with any alpha sets its bits.
    ///
    /// The corresponding C function is `cairo_xlib_surface_create_for_bitmap`.
    public static func xlibBitmap(_ display: XDisplay, bitmap: XPixmap) throws(X11Error) -> CairoSurface {
        guard let handle = cairo_xlib_surface_create_for_bitmap(
            try display.display(), bitmap.rawID, try display.screenOfDisplay(), bitmap.width, bitmap.height)
        else { throw .requestFailed("cairo_xlib_surface_create_for_bitmap") }
        return CairoSurface(handle: handle, drawable: bitmap)
    }

    /// The open `cairo_surface_t*`.
    fileprivate func pointer() throws(X11Error) -> OpaquePointer {
        guard let handle else { throw .requestFailed("cairo: the surface was destroyed") }
        return handle
    }

    /// Tells the surface its window was resized to `width`×`height` (at least 1×1).
    ///
    /// The corresponding C function is `cairo_xlib_surface_set_size`.
    public func setSize(width: Int32, height: Int32) throws(X11Error) {
        cairo_xlib_surface_set_size(try pointer(), max(1, width), max(1, height))
    }

    /// Sends whatever cairo still holds of the drawing to the drawable.
    ///
    /// The corresponding C function is `cairo_surface_flush`.
    public func flush() throws(X11Error) {
        cairo_surface_flush(try pointer())
    }

    /// Destroys the surface (its drawable may be destroyed after this). Safe to call twice.
    ///
    /// The corresponding C function is `cairo_surface_destroy`.
    public func destroy() {
        guard let handle else { return }
        cairo_surface_destroy(handle)
        self.handle = nil
        drawable?.liveSurfaces -= 1
    }

    // MARK: images in memory (the live view)

    /// An image in memory of `width`×`height` pixels (at least 1×1), 32 bits a pixel, the top byte
    /// unused (`CAIRO_FORMAT_RGB24`: B, G, R, X in memory on a little-endian machine).
    ///
    /// The corresponding C function is `cairo_image_surface_create`.
    public static func image(width: Int32, height: Int32) throws(X11Error) -> CairoSurface {
        guard let handle = cairo_image_surface_create(CAIRO_FORMAT_RGB24, max(1, width), max(1, height)),
              isValid(handle)
        else { throw .requestFailed("cairo_image_surface_create") }
        return CairoSurface(handle: handle, drawable: nil)
    }

    /// An image over pixels someone else owns (`data`, `stride` bytes a row, which must outlive the
    /// surface): 32 bits a pixel, with alpha (`premultiplied`, `CAIRO_FORMAT_ARGB32`: a cursor) or without
    /// (`CAIRO_FORMAT_RGB24`: the screen).
    ///
    /// The corresponding C function is `cairo_image_surface_create_for_data`.
    public static func wrapping(_ data: UnsafeMutableRawPointer, width: Int32, height: Int32, stride: Int32,
                                alpha: Bool) throws(X11Error) -> CairoSurface {
        guard let handle = cairo_image_surface_create_for_data(
            data.assumingMemoryBound(to: UInt8.self), alpha ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24, width, height, stride),
              isValid(handle)
        else { throw .requestFailed("cairo_image_surface_create_for_data") }
        return CairoSurface(handle: handle, drawable: nil)
    }

    /// Whether cairo made the surface (it returns an error surface, never nil, when it could not).
    ///
    /// The corresponding C function is `cairo_surface_status`.
    private static func isValid(_ handle: OpaquePointer) -> Bool {
        cairo_surface_status(handle) == CAIRO_STATUS_SUCCESS
    }

    /// An image's pixels and bytes a row (after `flush`).
    ///
    /// The corresponding C functions are `cairo_image_surface_get_data` and `cairo_image_surface_get_stride`.
    public func imagePixels() throws(X11Error) -> (data: UnsafeMutableRawPointer, stride: Int32) {
        let p = try pointer()
        guard let data = cairo_image_surface_get_data(p) else { throw .requestFailed("cairo_image_surface_get_data") }
        return (UnsafeMutableRawPointer(data), cairo_image_surface_get_stride(p))
    }

    /// Tells cairo that the pixels changed behind its back (a new screen capture in them).
    ///
    /// The corresponding C function is `cairo_surface_mark_dirty`.
    public func markDirty() throws(X11Error) {
        cairo_surface_mark_dirty(try pointer())
    }
}

/// How cairo smooths edges.
public enum CairoAntialias: Sendable {
    /// `CAIRO_ANTIALIAS_NONE`: every pixel fully in or out (for a 1-bit shape mask).
    case none
    /// `CAIRO_ANTIALIAS_GOOD`.
    case good
}

/// How cairo combines what is drawn with what is there.
public enum CairoOperator: Sendable {
    /// `CAIRO_OPERATOR_SOURCE`: replace.
    case source
    /// `CAIRO_OPERATOR_OVER`: blend on top.
    case over
}

/// A cairo drawing context on a surface (`cairo_t*`), for one redraw. Not copyable: it is destroyed
/// exactly once, with `destroy()`; `deinit` asserts that happened. Methods take effect at once on the
/// surface (the path ones build the current path).
public struct CairoContext: ~Copyable {
    private let handle: OpaquePointer

    /// A context drawing on `surface`.
    ///
    /// The corresponding C function is `cairo_create`.
    public init(_ surface: CairoSurface) throws(X11Error) {
        guard let handle = cairo_create(try surface.pointer()) else { throw .requestFailed("cairo_create") }
        self.handle = handle
    }

    deinit {
        assertionFailure("cairo context was not destroyed: call destroy()")
    }

    /// Destroys the context.
    ///
    /// The corresponding C function is `cairo_destroy`.
    public consuming func destroy() {
        cairo_destroy(handle)
        discard self
    }

    /// The corresponding C function is `cairo_set_antialias`.
    public func setAntialias(_ antialias: CairoAntialias) {
        cairo_set_antialias(handle, antialias == .none ? CAIRO_ANTIALIAS_NONE : CAIRO_ANTIALIAS_GOOD)
    }

    /// The corresponding C function is `cairo_set_operator`.
    public func setOperator(_ op: CairoOperator) {
        cairo_set_operator(handle, op == .source ? CAIRO_OPERATOR_SOURCE : CAIRO_OPERATOR_OVER)
    }

    /// The colour (components 0...1) later drawing uses.
    ///
    /// The corresponding C function is `cairo_set_source_rgba`.
    public func setSource(red: Double, green: Double, blue: Double, alpha: Double) {
        cairo_set_source_rgba(handle, red, green, blue, alpha)
    }

    /// The surface later drawing copies from, its top-left pixel at (`x`, `y`) of this context's
    /// surface (an offscreen layer composited onto a window).
    ///
    /// The corresponding C function is `cairo_set_source_surface`.
    public func setSource(_ surface: CairoSurface, x: Double, y: Double) throws(X11Error) {
        cairo_set_source_surface(handle, try surface.pointer(), x, y)
    }

    /// Multiplies the user-to-surface transformation by `matrix`: a point (x, y) of what is drawn next lands
    /// at (xx·x + xy·y + x0, yx·x + yy·y + y0) of the space before.
    ///
    /// The corresponding C function is `cairo_transform`.
    public func transform(_ matrix: CairoMatrix) {
        var m = cairo_matrix_t(xx: matrix.xx, yx: matrix.yx, xy: matrix.xy, yy: matrix.yy, x0: matrix.x0, y0: matrix.y0)
        cairo_transform(handle, &m)
    }

    /// Scales what is drawn next by `x` and `y` (user space to the surface's pixels).
    ///
    /// The corresponding C function is `cairo_scale`.
    public func scale(x: Double, y: Double) {
        cairo_scale(handle, x, y)
    }

    /// How the source surface is sampled when scaled: bilinear (smooth, fast), or the nearest pixel.
    ///
    /// The corresponding C functions are `cairo_get_source` and `cairo_pattern_set_filter`.
    public func setSourceFilter(bilinear: Bool) {
        cairo_pattern_set_filter(cairo_get_source(handle), bilinear ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_NEAREST)
    }

    /// Adds a closed rectangle to the path.
    ///
    /// The corresponding C function is `cairo_rectangle`.
    public func rectangle(x: Double, y: Double, width: Double, height: Double) {
        cairo_rectangle(handle, x, y, width, height)
    }

    /// Limits later drawing to the inside of the path (intersected with the clip so far), and clears
    /// the path. Rectangles on whole pixels make a clip of boxes, the fast one.
    ///
    /// The corresponding C function is `cairo_clip`.
    public func clip() {
        cairo_clip(handle)
    }

    /// Saves the drawing state (the clip, the source, the operator, ...) on a stack.
    ///
    /// The corresponding C function is `cairo_save`.
    public func save() {
        cairo_save(handle)
    }

    /// Goes back to the drawing state `save()` kept last (a clip set since is gone).
    ///
    /// The corresponding C function is `cairo_restore`.
    public func restore() {
        cairo_restore(handle)
    }

    /// Paints the source everywhere (within the clip).
    ///
    /// The corresponding C function is `cairo_paint`.
    public func paint() {
        cairo_paint(handle)
    }

    /// Round caps (`round: true`) or butt caps.
    ///
    /// The corresponding C function is `cairo_set_line_cap`.
    public func setLineCap(round: Bool) {
        cairo_set_line_cap(handle, round ? CAIRO_LINE_CAP_ROUND : CAIRO_LINE_CAP_BUTT)
    }

    /// Round joins (`round: true`) or mitred joins.
    ///
    /// The corresponding C function is `cairo_set_line_join`.
    public func setLineJoin(round: Bool) {
        cairo_set_line_join(handle, round ? CAIRO_LINE_JOIN_ROUND : CAIRO_LINE_JOIN_MITER)
    }

    /// The width of stroked lines, in pixels.
    ///
    /// The corresponding C function is `cairo_set_line_width`.
    public func setLineWidth(_ width: Double) {
        cairo_set_line_width(handle, width)
    }

    /// Clears the current path.
    ///
    /// The corresponding C function is `cairo_new_path`.
    public func newPath() {
        cairo_new_path(handle)
    }

    /// Starts a new sub-path at (`x`, `y`).
    ///
    /// The corresponding C function is `cairo_move_to`.
    public func move(toX x: Double, y: Double) {
        cairo_move_to(handle, x, y)
    }

    /// Adds a line to (`x`, `y`) to the path.
    ///
    /// The corresponding C function is `cairo_line_to`.
    public func line(toX x: Double, y: Double) {
        cairo_line_to(handle, x, y)
    }

    /// Adds a full circle of `radius` around (`x`, `y`) to the path.
    ///
    /// The corresponding C function is `cairo_arc` (from 0 to 2π).
    public func circle(x: Double, y: Double, radius: Double) {
        cairo_arc(handle, x, y, radius, 0, 2 * Double.pi)
    }

    /// Fills the path, keeping it (to stroke its outline next).
    ///
    /// The corresponding C function is `cairo_fill_preserve`.
    public func fillPreserve() {
        cairo_fill_preserve(handle)
    }

    /// Fills the path and clears it.
    ///
    /// The corresponding C function is `cairo_fill`.
    public func fill() {
        cairo_fill(handle)
    }

    /// Strokes the path and clears it.
    ///
    /// The corresponding C function is `cairo_stroke`.
    public func stroke() {
        cairo_stroke(handle)
    }
}

/// An affine map of the plane, as cairo's `cairo_matrix_t`: (x, y) → (xx·x + xy·y + x0, yx·x + yy·y + y0).
public struct CairoMatrix: Equatable, Sendable {
    public var xx, yx, xy, yy, x0, y0: Double

    public init(xx: Double, yx: Double, xy: Double, yy: Double, x0: Double, y0: Double) {
        (self.xx, self.yx, self.xy, self.yy, self.x0, self.y0) = (xx, yx, xy, yy, x0, y0)
    }

    public static let identity = CairoMatrix(xx: 1, yx: 0, xy: 0, yy: 1, x0: 0, y0: 0)

    /// A `width`×`height` framebuffer's pixels to the picture its monitor shows, for `wl_output`'s
    /// `transform` (0–7): the framebuffer holds the picture turned by the transform (90°, 180°, 270°
    /// counter-clockwise, 4–7 flipped first), so the inverse is applied. An unknown value is normal.
    public static func orienting(transform: Int32, width: Double, height: Double) -> CairoMatrix {
        let w = width, h = height
        switch transform {
        case 1: return CairoMatrix(xx: 0, yx: 1, xy: -1, yy: 0, x0: h, y0: 0)   // (x, y) → (h − y, x)
        case 2: return CairoMatrix(xx: -1, yx: 0, xy: 0, yy: -1, x0: w, y0: h)  // (w − x, h − y)
        case 3: return CairoMatrix(xx: 0, yx: -1, xy: 1, yy: 0, x0: 0, y0: w)   // (y, w − x)
        case 4: return CairoMatrix(xx: -1, yx: 0, xy: 0, yy: 1, x0: w, y0: 0)   // (w − x, y)
        case 5: return CairoMatrix(xx: 0, yx: 1, xy: 1, yy: 0, x0: 0, y0: 0)    // (y, x)
        case 6: return CairoMatrix(xx: 1, yx: 0, xy: 0, yy: -1, x0: 0, y0: h)   // (x, h − y)
        case 7: return CairoMatrix(xx: 0, yx: -1, xy: -1, yy: 0, x0: h, y0: w)  // (h − y, w − x)
        default: return .identity
        }
    }

    /// `self` first, then `next`.
    public func then(_ next: CairoMatrix) -> CairoMatrix {
        CairoMatrix(xx: next.xx * xx + next.xy * yx, yx: next.yx * xx + next.yy * yx,
                    xy: next.xx * xy + next.xy * yy, yy: next.yx * xy + next.yy * yy,
                    x0: next.xx * x0 + next.xy * y0 + next.x0, y0: next.yx * x0 + next.yy * y0 + next.y0)
    }
}
