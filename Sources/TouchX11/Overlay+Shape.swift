import CX11
import TouchCore

// The overlay's bounding shape (SHAPE): without a compositor, only what is drawn covers the desktop.

extension Overlay {
    /// Without a compositor, the window's bounding shape is what is drawn: the frame's 1-bit pixmap
    /// takes, over `boxes` (window coordinates), the drawings' shape and the items (2 px larger), and
    /// becomes the shape, so only the drawing covers the desktop. With a compositor, the whole window
    /// (its transparent pixels blend away).
    ///
    /// Through the wrappers: `XShapeCombineRectangles`, `XCreatePixmap`,
    /// `cairo_xlib_surface_create_for_bitmap` and `XShapeCombineMask` (ShapeBounding).
    func setBoundingShape(_ window: XWindow, over boxes: [PixelBox]) throws(X11Error) {
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
        try compose(mask.surface, within: boxes, layer: layerMaskValid && totalPoints > 0 ? layerMask?.surface : nil, mask: true)
        try display.setShape(.bounding, of: window, toMask: mask.pixmap)
    }
}
