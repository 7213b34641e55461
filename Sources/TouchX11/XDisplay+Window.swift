import CX11
import TouchCore

// Windows, visuals, colormaps, pixmaps, the SHAPE extension, atoms and selections: what the
// `Overlay` needs to put a window of its own on the screen.
//
// X resources a client creates are owned by small classes (`XWindow`, `XColormap`, `XPixmap`) that
// are released explicitly through the `XDisplay` that made them; each asserts in `deinit` that this
// happened. The release order is kept by the types, not by their users: a window owns its colormap
// (freed after the window), a window or pixmap cannot be destroyed while a cairo surface still draws
// on it, and the display cannot be closed while any of them is alive.

/// An X window id (an XID; 0 is `None`).
public struct WindowID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public var description: String { "0x" + String(rawValue, radix: 16) }
}

/// An interned X atom.
public struct AtomID: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
}

/// A visual (owned by the display, never freed) and the depth windows made with it have.
public struct XVisual {
    let pointer: UnsafeMutablePointer<Visual>
    /// Bits per pixel of a window made with this visual: 32 for an ARGB visual.
    public let depth: Int32
}

/// The events a client asks for on a window (`XSelectInput`'s mask).
public struct EventMask: OptionSet, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `StructureNotifyMask`: the window itself was configured, mapped, destroyed...
    public static let structureNotify = EventMask(rawValue: StructureNotifyMask)
    /// `SubstructureNotifyMask`: one of its children was.
    public static let substructureNotify = EventMask(rawValue: SubstructureNotifyMask)
    /// `ExposureMask`: parts of the window lost their contents and must be drawn again.
    public static let exposure = EventMask(rawValue: ExposureMask)
}

/// Which of a window's shapes a SHAPE request sets.
public enum ShapeKind: Sendable {
    /// `ShapeBounding`: where the window covers the screen.
    case bounding
    /// `ShapeInput`: where the window takes pointer input.
    case input

    var rawValue: Int32 {
        switch self {
        case .bounding: ShapeBounding
        case .input: ShapeInput
        }
    }
}

/// A colormap this client created. Freed by `XDisplay.destroyWindow` of the window that uses it, or
/// by `XDisplay.freeColormap`; `deinit` asserts that happened.
public final class XColormap {
    /// The colormap's id; 0 once freed.
    public fileprivate(set) var id: UInt

    fileprivate init(id: UInt) { self.id = id }

    deinit {
        assert(id == 0, "colormap was not freed: destroy its window (or call XDisplay.freeColormap) on every exit path")
    }
}

/// Something a cairo surface can draw on (a window or a pixmap): it cannot be destroyed while a
/// surface on it is alive.
public class XDrawable {
    /// The drawable's id; 0 once destroyed.
    public fileprivate(set) var rawID: UInt
    /// Cairo surfaces on this drawable not yet destroyed.
    var liveSurfaces = 0

    fileprivate init(rawID: UInt) { self.rawID = rawID }
}

/// A window this client created. Destroy it with `XDisplay.destroyWindow(_:)` (after destroying any
/// cairo surface on it, before closing the display); `deinit` asserts that happened.
public final class XWindow: XDrawable {
    /// The colormap the window was made with, freed with it.
    fileprivate var colormap: XColormap?

    /// The window's id; 0 once destroyed.
    public var id: WindowID { WindowID(rawValue: rawID) }

    fileprivate init(id: UInt, colormap: XColormap?) {
        self.colormap = colormap
        super.init(rawID: id)
    }

    deinit {
        assert(rawID == 0, "window \(id) was not destroyed: call XDisplay.destroyWindow on every exit path")
    }
}

/// A pixmap this client created. Free it with `XDisplay.freePixmap(_:)` (after destroying any cairo
/// surface on it, before closing the display); `deinit` asserts that happened.
public final class XPixmap: XDrawable {
    /// The pixmap's depth in bits (1: a bitmap).
    public let depth: Int32
    /// Its size in pixels.
    public let width: Int32, height: Int32

    fileprivate init(id: UInt, depth: Int32, width: Int32, height: Int32) {
        self.depth = depth
        self.width = width
        self.height = height
        super.init(rawID: id)
    }

    deinit {
        assert(rawID == 0, "pixmap was not freed: call XDisplay.freePixmap on every exit path")
    }
}

extension XDisplay {
    /// The root window of the default screen.
    ///
    /// The corresponding C function is `XRootWindow`.
    public func rootWindow() throws(X11Error) -> WindowID {
        WindowID(rawValue: XRootWindow(try display(), screen))
    }

    /// Whether the server has the SHAPE extension.
    ///
    /// The corresponding C function is `XShapeQueryExtension`.
    public func hasShapeExtension() throws(X11Error) -> Bool {
        var event: Int32 = 0, error: Int32 = 0
        return XShapeQueryExtension(try display(), &event, &error) != 0
    }

    /// A TrueColor visual of `depth` bits on the default screen (32: with an alpha channel), or nil
    /// when the screen has none.
    ///
    /// The corresponding C function is `XMatchVisualInfo` (class `TrueColor`).
    public func trueColorVisual(depth: Int32) throws(X11Error) -> XVisual? {
        var info = XVisualInfo()
        guard XMatchVisualInfo(try display(), screen, depth, TrueColor, &info) != 0, let visual = info.visual else {
            return nil
        }
        return XVisual(pointer: visual, depth: depth)
    }

    /// The default screen's default visual and depth.
    ///
    /// The corresponding C functions are `XDefaultVisual` and `XDefaultDepth`.
    public func defaultVisual() throws(X11Error) -> XVisual {
        let dpy = try display()
        guard let visual = XDefaultVisual(dpy, screen) else { throw .requestFailed("XDefaultVisual") }
        return XVisual(pointer: visual, depth: XDefaultDepth(dpy, screen))
    }

    /// A colormap for `visual` on the root window, with no cells allocated.
    ///
    /// The corresponding C function is `XCreateColormap` (`AllocNone`).
    public func createColormap(for visual: XVisual) throws(X11Error) -> XColormap {
        let dpy = try display()
        let id = XCreateColormap(dpy, try rootWindow().rawValue, visual.pointer, AllocNone)
        guard id != 0 else { throw .requestFailed("XCreateColormap") }
        liveResources += 1
        return XColormap(id: id)
    }

    /// Frees a colormap (one no window owns; a window's own is freed with it). Safe to call twice.
    ///
    /// The corresponding C function is `XFreeColormap`.
    public func freeColormap(_ colormap: XColormap) {
        guard colormap.id != 0 else { return }
        if let dpy = try? display() { XFreeColormap(dpy, colormap.id) }
        colormap.id = 0
        liveResources -= 1
    }

    /// Creates an unmapped, borderless child of the root window over `rect` (at least 1×1) with no
    /// background (`None`): the server never paints it, its owner paints every part that shows.
    /// `overrideRedirect`: the window manager leaves it alone (no frame, never moved). The window owns
    /// `colormap` from now on: it is freed when the window is destroyed (also when this throws).
    ///
    /// Why no background: when a shaped window's bounding shape grows, the X server exposes the new
    /// parts, and when they are more than a few rectangles it exposes their bounding box instead
    /// (`miWindowExposures`), painting the background over it, clipped to the window's shape: over
    /// the overlay's drawings, at a cost that follows how many rectangles the shape holds (48 % of
    /// Xvfb's time under a ten-finger drawing, with a background pixel).
    ///
    /// The corresponding C function is `XCreateWindow` (`InputOutput`).
    public func createWindow(
        _ rect: PixelRect, visual: XVisual, colormap: XColormap?, overrideRedirect: Bool
    ) throws(X11Error) -> XWindow {
        let dpy: OpaquePointer, root: WindowID
        do {
            dpy = try display()
            root = try rootWindow()
        } catch {
            if let colormap { freeColormap(colormap) }
            throw error
        }
        var attributes = XSetWindowAttributes()
        attributes.override_redirect = overrideRedirect ? 1 : 0
        attributes.background_pixmap = 0  // None
        attributes.border_pixel = 0
        var mask = UInt(CWOverrideRedirect | CWBackPixmap | CWBorderPixel)
        if let colormap {
            attributes.colormap = colormap.id
            mask |= UInt(CWColormap)
        }
        let id = XCreateWindow(dpy, root.rawValue, Int32(rect.x), Int32(rect.y),
                               UInt32(max(1, rect.width)), UInt32(max(1, rect.height)), 0, visual.depth,
                               UInt32(InputOutput), visual.pointer, mask, &attributes)
        guard id != 0 else {
            if let colormap { freeColormap(colormap) }
            throw .requestFailed("XCreateWindow")
        }
        liveResources += 1
        return XWindow(id: id, colormap: colormap)
    }

    /// Destroys a window made by `createWindow`, then frees its colormap. Every cairo surface on it
    /// must have been destroyed. Safe to call twice, and after the display was lost.
    ///
    /// The corresponding C function is `XDestroyWindow`.
    public func destroyWindow(_ window: XWindow) {
        guard window.rawID != 0 else { return }
        assert(window.liveSurfaces == 0, "window \(window.id) destroyed before its cairo surface")
        if let dpy = try? display() { XDestroyWindow(dpy, window.rawID) }
        window.rawID = 0
        liveResources -= 1
        if let colormap = window.colormap { freeColormap(colormap) }
        window.colormap = nil
    }

    /// Asks for the events in `mask` on `window`, replacing what this client asked for before on it.
    ///
    /// The corresponding C function is `XSelectInput`.
    public func selectInput(on window: WindowID, _ mask: EventMask) throws(X11Error) {
        XSelectInput(try display(), window.rawValue, mask.rawValue)
    }

    /// Sets the window's title (`WM_NAME`), for `xwininfo`, `xdotool search --name` and logs.
    ///
    /// The corresponding C function is `XStoreName`.
    public func setName(of window: XWindow, _ name: String) throws(X11Error) {
        let dpy = try display()
        _ = name.withCString { XStoreName(dpy, window.rawID, $0) }
    }

    /// Moves and resizes a window to cover `rect` (at least 1×1).
    ///
    /// The corresponding C function is `XMoveResizeWindow`.
    public func moveResize(_ window: XWindow, to rect: PixelRect) throws(X11Error) {
        XMoveResizeWindow(try display(), window.rawID, Int32(rect.x), Int32(rect.y),
                          UInt32(max(1, rect.width)), UInt32(max(1, rect.height)))
    }

    /// Maps a window on top of its siblings.
    ///
    /// The corresponding C function is `XMapRaised`.
    public func mapRaised(_ window: XWindow) throws(X11Error) {
        XMapRaised(try display(), window.rawID)
    }

    /// Puts a window on top of its siblings.
    ///
    /// The corresponding C function is `XRaiseWindow`.
    public func raise(_ window: XWindow) throws(X11Error) {
        XRaiseWindow(try display(), window.rawID)
    }

    /// Unmaps a window.
    ///
    /// The corresponding C function is `XUnmapWindow`.
    public func unmap(_ window: XWindow) throws(X11Error) {
        XUnmapWindow(try display(), window.rawID)
    }

    /// Sets `window`'s shape of `kind` to one rectangle at the window's origin of `width`×`height`
    /// pixels, or to nothing at all when `size` is nil (an empty input shape: every click goes through
    /// to the window below).
    ///
    /// The corresponding C function is `XShapeCombineRectangles` (`ShapeSet`).
    public func setShape(_ kind: ShapeKind, of window: XWindow, toRectangle size: (width: Int32, height: Int32)?) throws(X11Error) {
        let dpy = try display()
        var rectangle = XRectangle(x: 0, y: 0, width: UInt16(clamping: size?.width ?? 0), height: UInt16(clamping: size?.height ?? 0))
        let count: Int32 = size == nil ? 0 : 1
        withUnsafeMutablePointer(to: &rectangle) { pointer in
            XShapeCombineRectangles(dpy, window.rawID, kind.rawValue, 0, 0, count == 0 ? nil : pointer, count, ShapeSet, Unsorted)
        }
    }

    /// Sets `window`'s shape of `kind` to the set bits of `bitmap` (depth 1) at the window's origin.
    ///
    /// The corresponding C function is `XShapeCombineMask` (`ShapeSet`).
    public func setShape(_ kind: ShapeKind, of window: XWindow, toMask bitmap: XPixmap) throws(X11Error) {
        XShapeCombineMask(try display(), window.rawID, kind.rawValue, 0, 0, bitmap.rawID, ShapeSet)
    }

    /// Creates a pixmap of `width`×`height` pixels (at least 1×1) and `depth` bits on the screen of
    /// `window`.
    ///
    /// The corresponding C function is `XCreatePixmap`.
    public func createPixmap(on window: XWindow, width: Int32, height: Int32, depth: Int32) throws(X11Error) -> XPixmap {
        let (w, h) = (max(1, width), max(1, height))
        let id = XCreatePixmap(try display(), window.rawID, UInt32(w), UInt32(h), UInt32(depth))
        guard id != 0 else { throw .requestFailed("XCreatePixmap") }
        liveResources += 1
        return XPixmap(id: id, depth: depth, width: w, height: h)
    }

    /// Frees a pixmap made by `createPixmap`. Every cairo surface on it must have been destroyed.
    /// Safe to call twice, and after the display was lost.
    ///
    /// The corresponding C function is `XFreePixmap`.
    public func freePixmap(_ pixmap: XPixmap) {
        guard pixmap.rawID != 0 else { return }
        assert(pixmap.liveSurfaces == 0, "pixmap freed before its cairo surface")
        if let dpy = try? display() { XFreePixmap(dpy, pixmap.rawID) }
        pixmap.rawID = 0
        liveResources -= 1
    }

    /// The default screen's `Screen*` (for cairo's bitmap surfaces).
    ///
    /// The corresponding C function is `XScreenOfDisplay`.
    func screenOfDisplay() throws(X11Error) -> UnsafeMutablePointer<Screen> {
        guard let pointer = XScreenOfDisplay(try display(), screen) else { throw .requestFailed("XScreenOfDisplay") }
        return pointer
    }

    /// The atom named `name`, created if the server has none yet.
    ///
    /// The corresponding C function is `XInternAtom` (`only_if_exists` False).
    public func internAtom(_ name: String) throws(X11Error) -> AtomID {
        let dpy = try display()
        return AtomID(rawValue: name.withCString { XInternAtom(dpy, $0, 0) })
    }

    /// The window that owns the selection `atom`, or nil when nobody does (one round trip).
    ///
    /// The corresponding C function is `XGetSelectionOwner`.
    public func selectionOwner(of atom: AtomID) throws(X11Error) -> WindowID? {
        let owner = XGetSelectionOwner(try display(), atom.rawValue)
        return owner == 0 ? nil : WindowID(rawValue: owner)
    }

    /// Whether a compositing manager runs on the default screen: someone owns `_NET_WM_CM_S<screen>`
    /// (EWMH). Two round trips.
    public func hasCompositor() throws(X11Error) -> Bool {
        try selectionOwner(of: try internAtom("_NET_WM_CM_S\(screen)")) != nil
    }
}
