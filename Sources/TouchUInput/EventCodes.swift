// The event codes of <linux/input-event-codes.h> the devices use (the header does not import).

/// Event types, codes and properties, named as in <linux/input-event-codes.h>.
public enum EV {
    public static let syn: UInt16 = 0x00
    public static let key: UInt16 = 0x01
    public static let rel: UInt16 = 0x02
    public static let abs: UInt16 = 0x03
}

public enum SYN {
    public static let report: UInt16 = 0
}

public enum REL {
    public static let x: UInt16 = 0x00
    public static let y: UInt16 = 0x01
    public static let hwheel: UInt16 = 0x06
    public static let wheel: UInt16 = 0x08
    public static let wheelHiRes: UInt16 = 0x0b
    public static let hwheelHiRes: UInt16 = 0x0c
}

public enum ABS {
    public static let x: UInt16 = 0x00
    public static let y: UInt16 = 0x01
    public static let pressure: UInt16 = 0x18
    public static let tiltX: UInt16 = 0x1a
    public static let tiltY: UInt16 = 0x1b
    public static let mtSlot: UInt16 = 0x2f
    public static let mtPositionX: UInt16 = 0x35
    public static let mtPositionY: UInt16 = 0x36
    public static let mtTrackingID: UInt16 = 0x39
}

public enum BTN {
    public static let left: UInt16 = 0x110
    public static let right: UInt16 = 0x111
    public static let middle: UInt16 = 0x112
    public static let side: UInt16 = 0x113
    public static let extra: UInt16 = 0x114
    public static let toolPen: UInt16 = 0x140
    public static let toolRubber: UInt16 = 0x141
    public static let toolFinger: UInt16 = 0x145
    public static let toolQuintTap: UInt16 = 0x148
    public static let touch: UInt16 = 0x14a
    public static let stylus: UInt16 = 0x14b
    public static let stylus2: UInt16 = 0x14c
    public static let toolDoubleTap: UInt16 = 0x14d
    public static let toolTripleTap: UInt16 = 0x14e
    public static let toolQuadTap: UInt16 = 0x14f
}

public enum INPUT_PROP {
    public static let pointer: UInt16 = 0x00
    public static let direct: UInt16 = 0x01
    public static let buttonpad: UInt16 = 0x02
}

/// `BUS_VIRTUAL`.
let busVirtual: UInt16 = 0x06
/// One notch of a hi-res wheel (`REL_WHEEL_HI_RES`): the kernel's fixed 120 units per detent.
public let hiResUnitsPerNotch: Int32 = 120
