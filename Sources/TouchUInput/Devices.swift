// The kernel input devices touchbridge creates through uinput. Each owns its /dev/uinput descriptor:
// `close()` (or deinit, or the process dying) makes the kernel destroy the device, and the kernel
// then ends every touch and releases every key and button the device held.
import TouchCore

/// An absolute axis: its range and resolution (units per mm).
struct Axis {
    var code: UInt16
    var minimum: Int32 = 0
    var maximum: Int32
    var resolution: Int32

    init(code: UInt16, minimum: Int32 = 0, maximum: Int32, resolution: Int32) {
        self.code = code
        self.minimum = minimum
        self.maximum = maximum
        self.resolution = resolution
    }
}

private func enable(_ file: UInputFile, keys: [UInt16] = [], rels: [UInt16] = [], abs: [Axis] = [],
                    props: [UInt16] = []) throws(UInputError) {
    if !keys.isEmpty { try file.enable(UInputRequest.setEvBit, EV.key, "UI_SET_EVBIT") }
    if !rels.isEmpty { try file.enable(UInputRequest.setEvBit, EV.rel, "UI_SET_EVBIT") }
    if !abs.isEmpty { try file.enable(UInputRequest.setEvBit, EV.abs, "UI_SET_EVBIT") }
    for k in keys { try file.enable(UInputRequest.setKeyBit, k, "UI_SET_KEYBIT") }
    for r in rels { try file.enable(UInputRequest.setRelBit, r, "UI_SET_RELBIT") }
    for a in abs {
        try file.enable(UInputRequest.setAbsBit, a.code, "UI_SET_ABSBIT")
        try file.setup(AbsSetup(code: a.code, minimum: a.minimum, maximum: a.maximum, resolution: a.resolution))
    }
    for p in props { try file.enable(UInputRequest.setPropBit, p, "UI_SET_PROPBIT") }
}

/// Where /dev/uinput is.
public let uinputPath = "/dev/uinput"

/// Multitouch contacts on slots, shared by the touchscreen and the touchpad: tracking ids, the
/// protocol B slot switches, `BTN_TOUCH` and (touchpad) `BTN_TOOL_*` for the finger count.
struct Contacts {
    static let slots = 10
    var down = [Bool](repeating: false, count: slots)
    var lastSlot: Int32 = -1
    var nextTrackingID: Int32 = 1
    var count: Int { down.reduce(0) { $0 + ($1 ? 1 : 0) } }

    mutating func select(_ slot: Int, on device: UInputDevice) throws(UInputError) {
        if lastSlot != Int32(slot) {
            try device.emit(EV.abs, ABS.mtSlot, Int32(slot))
            lastSlot = Int32(slot)
        }
    }

    /// Whether `slot` is valid and the finger in it is (`true`) or is not down.
    func isDown(_ slot: Int) -> Bool { slot >= 0 && slot < Self.slots && down[slot] }
}

/// A direct-touch multitouch screen (`INPUT_PROP_DIRECT`, ten slots). Its axes are the X screen's
/// pixels times `unitsPerPixel`: a contact at pixel p is sent at p·units + units/2, which libinput and
/// the X server map back onto pixel p of the whole screen, so touchbridge's own monitor mapping applies
/// unchanged. Every contact is an XI 2.2 touch sequence for X clients.
public final class UInputTouchscreen {
    /// Its product id (the vendor is `UInputDevice.vendor`), by which a seat knows it before it exists.
    public static let product: UInt16 = 1
    public let device: UInputDevice
    public let width: Int32
    public let height: Int32
    public static let unitsPerPixel: Int32 = 4
    private var contacts = Contacts()

    /// A touchscreen covering a `width`×`height` pixel screen of about `pixelsPerMM` pixels per mm.
    public convenience init(name: String = "touchbridge touchscreen", width: Int32, height: Int32, pixelsPerMM: Int32 = 4,
                            path: String = uinputPath) throws(UInputError) {
        let u = Self.unitsPerPixel
        let res = max(1, pixelsPerMM * u)
        let xs = Axis(code: 0, maximum: width * u - 1, resolution: res)
        let ys = Axis(code: 0, maximum: height * u - 1, resolution: res)
        self.init(width: width, height: height, device: try UInputDevice(path: path, name: name, product: Self.product) { (file) throws(UInputError) in
            try enable(file, keys: [BTN.touch],
                       abs: [Axis(code: ABS.x, maximum: xs.maximum, resolution: res),
                             Axis(code: ABS.y, maximum: ys.maximum, resolution: res),
                             Axis(code: ABS.mtSlot, maximum: Int32(Contacts.slots - 1), resolution: 0),
                             Axis(code: ABS.mtTrackingID, maximum: 65535, resolution: 0),
                             Axis(code: ABS.mtPositionX, maximum: xs.maximum, resolution: res),
                             Axis(code: ABS.mtPositionY, maximum: ys.maximum, resolution: res)],
                       props: [INPUT_PROP.direct])
        })
    }

    /// On `device` (a test's recording one, or the kernel's above).
    init(width: Int32, height: Int32, device: UInputDevice) {
        self.width = width
        self.height = height
        self.device = device
    }

    private func units(_ p: Int32, limit: Int32) -> Int32 {
        min(max(p, 0), limit - 1) * Self.unitsPerPixel + Self.unitsPerPixel / 2
    }

    /// The finger in `slot` (0...9) is at pixel (x, y): a new contact if it was up. Ends no frame.
    public func touch(slot: Int, x: Int32, y: Int32) throws(UInputError) {
        guard slot >= 0 && slot < Contacts.slots else { return }
        let first = contacts.count == 0
        try contacts.select(slot, on: device)
        if !contacts.down[slot] {
            contacts.down[slot] = true
            try device.emit(EV.abs, ABS.mtTrackingID, contacts.nextTrackingID)
            contacts.nextTrackingID = contacts.nextTrackingID % 65535 + 1
        }
        let ux = units(x, limit: width), uy = units(y, limit: height)
        try device.emit(EV.abs, ABS.mtPositionX, ux)
        try device.emit(EV.abs, ABS.mtPositionY, uy)
        if first { try device.emit(EV.key, BTN.touch, 1) }
        if first || contacts.down.firstIndex(of: true) == slot {
            try device.emit(EV.abs, ABS.x, ux)
            try device.emit(EV.abs, ABS.y, uy)
        }
    }

    /// The finger in `slot` lifted (no-op when it is up). Ends no frame.
    public func lift(slot: Int) throws(UInputError) {
        guard contacts.isDown(slot) else { return }
        try contacts.select(slot, on: device)
        try device.emit(EV.abs, ABS.mtTrackingID, -1)
        contacts.down[slot] = false
        if contacts.count == 0 { try device.emit(EV.key, BTN.touch, 0) }
    }

    /// Lifts every finger and ends the frame.
    public func liftAll() throws(UInputError) {
        for s in 0..<Contacts.slots { try lift(slot: s) }
        try device.sync()
    }

    /// Ends the frame (`SYN_REPORT`).
    public func sync() throws(UInputError) { try device.sync() }
}

/// A pen tablet on the screen (`INPUT_PROP_DIRECT`, as a drawing display): libinput takes it as a tablet
/// (X clients see its pressure and tilt as XInput valuators, Wayland clients get tablet-v2 events).
/// `BTN_TOOL_PEN` or `BTN_TOOL_RUBBER` for proximity (the pen or its eraser end), `BTN_TOUCH` for the
/// tip, `BTN_STYLUS` for the barrel button (`BTN_STYLUS2`, a second one, is declared for what tablets
/// report; the page has one); `ABS_X`/`ABS_Y` are the X screen's pixels times `unitsPerPixel`, as the
/// touchscreen's, so touchbridge's monitor mapping applies unchanged, with a resolution of
/// `pixelsPerMM`·units per mm; `ABS_PRESSURE` 0…4095; `ABS_TILT_X`/`ABS_TILT_Y` in degrees, -90…90
/// (resolution 57 units per radian, as the kernel counts tilt).
public final class UInputPenTablet {
    /// Its product id (the vendor is `UInputDevice.vendor`), by which a seat knows it before it exists.
    public static let product: UInt16 = 4
    public let device: UInputDevice
    public let width: Int32
    public let height: Int32
    public static let unitsPerPixel: Int32 = 4
    /// Tilt units per radian: one unit a degree.
    public static let tiltResolution: Int32 = 57
    /// The tool in proximity, and what it holds (the last frame sent).
    public private(set) var current: PenFrame?

    /// A tablet covering a `width`×`height` pixel screen of about `pixelsPerMM` pixels per mm.
    public init(name: String = "touchbridge pen", width: Int32, height: Int32, pixelsPerMM: Int32 = 4,
                path: String = uinputPath) throws(UInputError) {
        self.width = width
        self.height = height
        let u = Self.unitsPerPixel
        let res = max(1, pixelsPerMM * u)
        device = try UInputDevice(path: path, name: name, product: Self.product) { (file) throws(UInputError) in
            try enable(file, keys: [BTN.toolPen, BTN.toolRubber, BTN.touch, BTN.stylus, BTN.stylus2],
                       abs: [Axis(code: ABS.x, maximum: width * u - 1, resolution: res),
                             Axis(code: ABS.y, maximum: height * u - 1, resolution: res),
                             Axis(code: ABS.pressure, maximum: Int32(PenFrame.pressureMax), resolution: 0),
                             Axis(code: ABS.tiltX, minimum: -Int32(PenFrame.tiltMax), maximum: Int32(PenFrame.tiltMax),
                                  resolution: Self.tiltResolution),
                             Axis(code: ABS.tiltY, minimum: -Int32(PenFrame.tiltMax), maximum: Int32(PenFrame.tiltMax),
                                  resolution: Self.tiltResolution)],
                       props: [INPUT_PROP.direct])
        }
    }

    private func units(_ p: Int32, limit: Int32) -> Int32 {
        min(max(p, 0), limit - 1) * Self.unitsPerPixel + Self.unitsPerPixel / 2
    }

    private static func tool(_ t: PenTool) -> UInt16 { t == .eraser ? BTN.toolRubber : BTN.toolPen }

    /// The pen is near with this state: enters proximity (with the other tool, leaving with the old
    /// one first), or reports what changed. Ends the frame.
    public func set(_ f: PenFrame) throws(UInputError) {
        if let c = current, c.tool != f.tool { try leave() }
        let entering = current == nil
        try device.emit(EV.abs, ABS.x, units(f.at.x, limit: width))
        try device.emit(EV.abs, ABS.y, units(f.at.y, limit: height))
        try device.emit(EV.abs, ABS.pressure, Int32(f.pressure))
        try device.emit(EV.abs, ABS.tiltX, Int32(f.tiltX))
        try device.emit(EV.abs, ABS.tiltY, Int32(f.tiltY))
        if entering { try device.emit(EV.key, Self.tool(f.tool), 1) }
        if entering || current?.barrel != f.barrel { try device.emit(EV.key, BTN.stylus, f.barrel ? 1 : 0) }
        if entering || current?.touching != f.touching { try device.emit(EV.key, BTN.touch, f.touching ? 1 : 0) }
        current = f
        try device.sync()
    }

    /// The pen leaves proximity: tip up, buttons released, the tool gone (nothing when it is away).
    /// Ends the frame.
    public func leave() throws(UInputError) {
        guard let c = current else { return }
        current = nil
        try device.emit(EV.abs, ABS.pressure, 0)
        if c.touching { try device.emit(EV.key, BTN.touch, 0) }
        if c.barrel { try device.emit(EV.key, BTN.stylus, 0) }
        try device.emit(EV.key, Self.tool(c.tool), 0)
        try device.sync()
    }
}

/// A touchpad libinput takes for the user's own (`INPUT_PROP_POINTER` + `INPUT_PROP_BUTTONPAD`, a
/// clickpad): ten slots, `BTN_TOOL_FINGER`…`BTN_TOOL_QUINTTAP` for the finger count, MT axes whose
/// resolution gives its physical size. Taps, two-finger scrolling, pinch and swipe come from libinput
/// with the desktop's own settings.
public final class UInputTouchpad {
    /// Its product id (the vendor is `UInputDevice.vendor`), by which a seat knows it before it exists.
    public static let product: UInt16 = 2
    public let device: UInputDevice
    /// The axes' maxima, in units (`unitsPerMM` per mm).
    public let maxX: Int32
    public let maxY: Int32
    public let unitsPerMM: Int32
    private var contacts = Contacts()
    private var toolShown: UInt16?

    /// A `widthMM`×`heightMM` touchpad.
    public convenience init(name: String = "touchbridge touchpad", widthMM: Int32, heightMM: Int32, unitsPerMM: Int32 = 20,
                            path: String = uinputPath) throws(UInputError) {
        let (mx, my, r) = (widthMM * unitsPerMM, heightMM * unitsPerMM, unitsPerMM)
        self.init(widthMM: widthMM, heightMM: heightMM, unitsPerMM: unitsPerMM,
                  device: try UInputDevice(path: path, name: name, product: Self.product) { (file) throws(UInputError) in
            try enable(file, keys: [BTN.left, BTN.touch, BTN.toolFinger, BTN.toolDoubleTap, BTN.toolTripleTap,
                                    BTN.toolQuadTap, BTN.toolQuintTap],
                       abs: [Axis(code: ABS.x, maximum: mx, resolution: r), Axis(code: ABS.y, maximum: my, resolution: r),
                             Axis(code: ABS.mtSlot, maximum: Int32(Contacts.slots - 1), resolution: 0),
                             Axis(code: ABS.mtTrackingID, maximum: 65535, resolution: 0),
                             Axis(code: ABS.mtPositionX, maximum: mx, resolution: r),
                             Axis(code: ABS.mtPositionY, maximum: my, resolution: r)],
                       props: [INPUT_PROP.pointer, INPUT_PROP.buttonpad])
        })
    }

    /// On `device` (a test's recording one, or the kernel's above).
    init(widthMM: Int32, heightMM: Int32, unitsPerMM: Int32, device: UInputDevice) {
        self.unitsPerMM = unitsPerMM
        maxX = widthMM * unitsPerMM
        maxY = heightMM * unitsPerMM
        self.device = device
    }

    /// The finger in `slot` is at (x, y) in units (0...maxX, 0...maxY). Ends no frame: call `sync()`
    /// once every finger of the frame is set.
    public func touch(slot: Int, x: Int32, y: Int32) throws(UInputError) {
        guard slot >= 0 && slot < Contacts.slots else { return }
        try contacts.select(slot, on: device)
        if !contacts.down[slot] {
            contacts.down[slot] = true
            try device.emit(EV.abs, ABS.mtTrackingID, contacts.nextTrackingID)
            contacts.nextTrackingID = contacts.nextTrackingID % 65535 + 1
        }
        let cx = min(max(x, 0), maxX), cy = min(max(y, 0), maxY)
        try device.emit(EV.abs, ABS.mtPositionX, cx)
        try device.emit(EV.abs, ABS.mtPositionY, cy)
        if contacts.down.firstIndex(of: true) == slot {
            try device.emit(EV.abs, ABS.x, cx)
            try device.emit(EV.abs, ABS.y, cy)
        }
    }

    /// The finger in `slot` lifted. Ends no frame.
    public func lift(slot: Int) throws(UInputError) {
        guard contacts.isDown(slot) else { return }
        try contacts.select(slot, on: device)
        try device.emit(EV.abs, ABS.mtTrackingID, -1)
        contacts.down[slot] = false
    }

    /// Presses or releases the pad's button (a clickpad's physical click).
    public func click(_ pressed: Bool) throws(UInputError) {
        try device.emit(EV.key, BTN.left, pressed ? 1 : 0)
    }

    /// Sets `BTN_TOUCH` and the `BTN_TOOL_*` of the finger count, then ends the frame.
    public func sync() throws(UInputError) {
        let n = contacts.count
        let tool: UInt16? = switch n {
        case 0: nil
        case 1: BTN.toolFinger
        case 2: BTN.toolDoubleTap
        case 3: BTN.toolTripleTap
        case 4: BTN.toolQuadTap
        default: BTN.toolQuintTap
        }
        if tool != toolShown {
            if let old = toolShown { try device.emit(EV.key, old, 0) }
            if let tool { try device.emit(EV.key, tool, 1) }
            if (toolShown == nil) != (tool == nil) { try device.emit(EV.key, BTN.touch, tool == nil ? 0 : 1) }
            toolShown = tool
        }
        try device.sync()
    }

    /// Lifts every finger, releases the button and ends the frame.
    public func liftAll() throws(UInputError) {
        for s in 0..<Contacts.slots { try lift(slot: s) }
        try click(false)
        try sync()
    }
}

/// A relative pointer with buttons and hi-res wheels (`REL_WHEEL_HI_RES`, `REL_HWHEEL_HI_RES`: 120
/// per notch), so scrolling finer than a notch reaches clients as smooth-scroll valuators.
public final class UInputPointer {
    /// Its product id (the vendor is `UInputDevice.vendor`), by which a seat knows it before it exists.
    public static let product: UInt16 = 3
    public let device: UInputDevice
    private var wheelRemainder: Int32 = 0
    private var hwheelRemainder: Int32 = 0

    public convenience init(name: String = "touchbridge pointer", path: String = uinputPath) throws(UInputError) {
        self.init(device: try UInputDevice(path: path, name: name, product: Self.product) { (file) throws(UInputError) in
            try enable(file, keys: [BTN.left, BTN.right, BTN.middle, BTN.side, BTN.extra],
                       rels: [REL.x, REL.y, REL.wheel, REL.hwheel, REL.wheelHiRes, REL.hwheelHiRes])
        })
    }

    /// On `device` (a test's recording one, or the kernel's above).
    init(device: UInputDevice) { self.device = device }

    /// Moves by (dx, dy) device units. Ends no frame.
    public func move(dx: Int32, dy: Int32) throws(UInputError) {
        if dx != 0 { try device.emit(EV.rel, REL.x, dx) }
        if dy != 0 { try device.emit(EV.rel, REL.y, dy) }
    }

    /// Presses or releases `code` (`BTN_LEFT`…). Ends no frame.
    public func button(_ code: UInt16, pressed: Bool) throws(UInputError) {
        try device.emit(EV.key, code, pressed ? 1 : 0)
    }

    /// Scrolls by hi-res units (120 = one notch; positive = up / right, as the kernel counts), with the
    /// legacy `REL_WHEEL`/`REL_HWHEEL` notch each time a whole notch has accumulated. Ends no frame.
    public func scroll(vertical: Int32, horizontal: Int32) throws(UInputError) {
        if vertical != 0 {
            try device.emit(EV.rel, REL.wheelHiRes, vertical)
            wheelRemainder += vertical
            let notches = wheelRemainder / hiResUnitsPerNotch
            if notches != 0 {
                try device.emit(EV.rel, REL.wheel, notches)
                wheelRemainder -= notches * hiResUnitsPerNotch
            }
        }
        if horizontal != 0 {
            try device.emit(EV.rel, REL.hwheelHiRes, horizontal)
            hwheelRemainder += horizontal
            let notches = hwheelRemainder / hiResUnitsPerNotch
            if notches != 0 {
                try device.emit(EV.rel, REL.hwheel, notches)
                hwheelRemainder -= notches * hiResUnitsPerNotch
            }
        }
    }

    public func sync() throws(UInputError) { try device.sync() }
}

/// A keyboard with every key code up to `KEY_MICMUTE` (248).
public final class UInputKeyboard {
    /// Its product id (the vendor is `UInputDevice.vendor`), by which a seat knows it before it exists.
    public static let product: UInt16 = 4
    public let device: UInputDevice

    public init(name: String = "touchbridge keyboard", path: String = uinputPath) throws(UInputError) {
        device = try UInputDevice(path: path, name: name, product: Self.product) { (file) throws(UInputError) in
            try enable(file, keys: (1...248).map { UInt16($0) })
        }
    }

    /// Presses or releases the key with evdev code `code`. Ends no frame.
    public func key(_ code: UInt16, pressed: Bool) throws(UInputError) {
        try device.emit(EV.key, code, pressed ? 1 : 0)
    }

    public func sync() throws(UInputError) { try device.sync() }
}
