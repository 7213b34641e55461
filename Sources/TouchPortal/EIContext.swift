// The one owner of libei (loaded at run time through CPortal's tb_ei_* shim): typed wrappers over every
// libei call, each the only call site of its C function, with the C name in its doc comment.
import CPortal
import Glibc
import TouchCore

/// What libei's devices can do, as the compositor offered it (each a device capability, on whichever
/// device has it).
public struct EICapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let pointer = EICapabilities(rawValue: UInt32(TB_EI_CAP_POINTER))
    public static let pointerAbsolute = EICapabilities(rawValue: UInt32(TB_EI_CAP_POINTER_ABSOLUTE))
    public static let keyboard = EICapabilities(rawValue: UInt32(TB_EI_CAP_KEYBOARD))
    public static let touch = EICapabilities(rawValue: UInt32(TB_EI_CAP_TOUCH))
    public static let scroll = EICapabilities(rawValue: UInt32(TB_EI_CAP_SCROLL))
    public static let button = EICapabilities(rawValue: UInt32(TB_EI_CAP_BUTTON))
    public static let all: EICapabilities = [.pointer, .pointerAbsolute, .keyboard, .touch, .scroll, .button]

    public var description: String {
        let names: [(EICapabilities, String)] = [(.pointer, "pointer"), (.pointerAbsolute, "absolute pointer"), (.button, "buttons"),
                                                 (.scroll, "scroll"), (.keyboard, "keyboard"), (.touch, "touch")]
        let have = names.filter { contains($0.0) }.map(\.1)
        return have.isEmpty ? "nothing" : have.joined(separator: ", ")
    }
}

/// What the EIS connection reported, for the log and the daemon.
public enum EIEvent: Sendable, Equatable {
    case connected
    /// The compositor ended the connection (the session ended, the compositor went away).
    case disconnected
    case seatAdded(String)
    case deviceAdded(String, EICapabilities)
    case deviceResumed(String)
    case devicePaused(String)
    case deviceRemoved(String)
}

/// A libei sender context on the descriptor ConnectToEIS gave. Not thread-safe: owned by the loop.
public final class EIContext: EmulatedDevices {
    private var ei: OpaquePointer?
    /// The devices the compositor added (each referenced), with what each can do, and whether it is
    /// resumed and emulating.
    private struct Device {
        var pointer: OpaquePointer
        var name: String
        var capabilities: EICapabilities
        var emulating: Bool
        var dirty: Bool
    }
    private var devices: [Device] = []
    /// Touches down, by slot (each referenced), on the device that has touch.
    private var touches: [UInt8: (touch: OpaquePointer, device: Int)] = [:]
    private var sequence: UInt32 = 0
    /// The descriptor to wait on (`tb_ei_get_fd`).
    public let descriptor: Int32

    /// Loads libei at run time (`tb_ei_load`; done once, later calls answer the same): nil when it is
    /// there, else why not (`touchbridge doctor` asks this too).
    public static func load() -> String? {
        tb_ei_load().map { String(cString: $0) }
    }

    /// Loads libei (`load`), makes a sender context (`tb_ei_new_sender`) named `name`
    /// (`tb_ei_configure_name`) on `fd` (`tb_ei_setup_backend_fd`, which takes it over), and the descriptor
    /// to wait on (`tb_ei_get_fd`). Throws why not; `fd` is closed then.
    public init(fd: Int32, name: String) throws(PortalFailure) {
        if let error = Self.load() {
            Glibc.close(fd)
            throw PortalFailure(.unavailable, error)
        }
        guard let ei = tb_ei_new_sender() else {
            Glibc.close(fd)
            throw PortalFailure(.unavailable, "libei: ei_new_sender failed")
        }
        self.ei = ei
        tb_ei_configure_name(ei, name)
        let r = tb_ei_setup_backend_fd(ei, fd)
        guard r == 0 else {
            Self.free(ei)
            self.ei = nil
            throw PortalFailure(.unavailable, "libei: ei_setup_backend_fd: \(String(cString: strerror(-r)))")
        }
        descriptor = tb_ei_get_fd(ei)
    }

    deinit { close() }

    /// What the resumed devices can do now.
    public var usable: EICapabilities {
        devices.reduce(into: EICapabilities()) { if $1.emulating { $0.formUnion($1.capabilities) } }
    }

    /// What the added devices can do, resumed or not.
    public var offered: EICapabilities {
        devices.reduce(into: EICapabilities()) { $0.formUnion($1.capabilities) }
    }

    /// The regions of the absolute devices (`tb_ei_device_get_region`, `tb_ei_region_get_x`,
    /// `tb_ei_region_get_y`, `tb_ei_region_get_width`, `tb_ei_region_get_height`), in the desktop's logical pixels.
    public var regions: [PixelRect] {
        var out: [PixelRect] = []
        for d in devices where d.capabilities.contains(.pointerAbsolute) || d.capabilities.contains(.touch) {
            var i = 0
            while let region = tb_ei_device_get_region(d.pointer, i) {
                let rect = PixelRect(x: Int32(clamping: tb_ei_region_get_x(region)), y: Int32(clamping: tb_ei_region_get_y(region)),
                                     width: Int32(clamping: tb_ei_region_get_width(region)), height: Int32(clamping: tb_ei_region_get_height(region)))
                if !out.contains(rect) { out.append(rect) }
                i += 1
            }
        }
        return out
    }

    /// Reads what the compositor sent (`tb_ei_dispatch`) and handles each event (`tb_ei_get_event`,
    /// `tb_ei_event_get_type`, `tb_ei_event_get_seat`, `tb_ei_event_get_device`, `tb_ei_event_unref`): binds every
    /// capability on a new seat (`tb_ei_seat_bind_capabilities`, the variadic call in C), keeps new
    /// devices (`tb_ei_device_ref`, `tb_ei_device_get_name`, `tb_ei_device_has_capability`), starts emulating
    /// on resumed ones (`tb_ei_device_start_emulating`), forgets paused and removed ones. Returns what happened.
    public func dispatch() -> [EIEvent] {
        guard let ei else { return [.disconnected] }
        tb_ei_dispatch(ei)
        var events: [EIEvent] = []
        while let event = tb_ei_get_event(ei) {
            defer { _ = tb_ei_event_unref(event) }
            let type = Int(tb_ei_event_get_type(event))
            // Every event but CONNECT and DISCONNECT has a device (or NULL, for a seat's).
            let eventDevice = type == Int(TB_EI_EVENT_CONNECT) || type == Int(TB_EI_EVENT_DISCONNECT) ? nil : tb_ei_event_get_device(event)
            switch type {
            case Int(TB_EI_EVENT_CONNECT): events.append(.connected)
            case Int(TB_EI_EVENT_DISCONNECT): events.append(.disconnected)
            case Int(TB_EI_EVENT_SEAT_ADDED):
                if let seat = tb_ei_event_get_seat(event) {
                    tb_ei_seat_bind_capabilities(seat, EICapabilities.all.rawValue)
                    events.append(.seatAdded("seat"))
                }
            case Int(TB_EI_EVENT_DEVICE_ADDED):
                guard let device = eventDevice else { continue }
                var caps = EICapabilities()
                for bit in 0..<6 where tb_ei_device_has_capability(device, UInt32(1) << UInt32(bit)) {
                    caps.insert(EICapabilities(rawValue: UInt32(1) << UInt32(bit)))
                }
                let name = tb_ei_device_get_name(device).map { String(cString: $0) } ?? "a device"
                devices.append(Device(pointer: tb_ei_device_ref(device), name: name, capabilities: caps, emulating: false, dirty: false))
                events.append(.deviceAdded(name, caps))
            case Int(TB_EI_EVENT_DEVICE_RESUMED):
                guard let device = eventDevice, let i = index(of: device) else { continue }
                sequence &+= 1
                tb_ei_device_start_emulating(device, sequence)
                devices[i].emulating = true
                events.append(.deviceResumed(devices[i].name))
            case Int(TB_EI_EVENT_DEVICE_PAUSED):
                guard let device = eventDevice, let i = index(of: device) else { continue }
                devices[i].emulating = false
                dropTouches(on: i)
                events.append(.devicePaused(devices[i].name))
            case Int(TB_EI_EVENT_DEVICE_REMOVED):
                guard let device = eventDevice, let i = index(of: device) else { continue }
                dropTouches(on: i)
                let gone = devices.remove(at: i)
                Self.release(device: gone.pointer)
                // The touches' device indexes after it shift down.
                for (slot, t) in touches where t.device > i { touches[slot] = (t.touch, t.device - 1) }
                events.append(.deviceRemoved(gone.name))
            default: continue
            }
        }
        return events
    }

    private func index(of device: OpaquePointer) -> Int? { devices.firstIndex { $0.pointer == device } }

    /// Forgets the touches on device `i`: the compositor ended them with the device.
    private func dropTouches(on i: Int) {
        for (slot, t) in touches where t.device == i {
            Self.release(touch: t.touch)
            touches[slot] = nil
        }
    }

    /// The resumed device that has `capability`, marked as changed (its frame ends in `frame`).
    private func device(with capability: EICapabilities) -> OpaquePointer? {
        guard let i = devices.firstIndex(where: { $0.emulating && $0.capabilities.contains(capability) }) else { return nil }
        devices[i].dirty = true
        return devices[i].pointer
    }

    /// `tb_ei_device_pointer_motion`. False when no resumed device has the capability.
    public func pointerMotion(dx: Double, dy: Double) -> Bool {
        guard let d = device(with: .pointer) else { return false }
        tb_ei_device_pointer_motion(d, dx, dy)
        return true
    }

    /// `tb_ei_device_pointer_motion_absolute`, in the desktop's logical pixels.
    public func pointerMotionAbsolute(x: Double, y: Double) -> Bool {
        guard let d = device(with: .pointerAbsolute) else { return false }
        tb_ei_device_pointer_motion_absolute(d, x, y)
        return true
    }

    /// `tb_ei_device_button_button`, an evdev button code (BTN_LEFT 0x110…).
    public func button(_ code: UInt32, pressed: Bool) -> Bool {
        guard let d = device(with: .button) else { return false }
        tb_ei_device_button_button(d, code, pressed)
        return true
    }

    /// `tb_ei_device_scroll_delta`, in logical pixels (down and right positive).
    public func scroll(dx: Double, dy: Double) -> Bool {
        guard let d = device(with: .scroll) else { return false }
        tb_ei_device_scroll_delta(d, dx, dy)
        return true
    }

    /// `tb_ei_device_scroll_discrete`, 120 a wheel click (down and right positive).
    public func scrollDiscrete(dx: Int32, dy: Int32) -> Bool {
        guard let d = device(with: .scroll) else { return false }
        tb_ei_device_scroll_discrete(d, dx, dy)
        return true
    }

    /// `tb_ei_device_keyboard_key`, an evdev key code.
    public func key(_ code: UInt32, pressed: Bool) -> Bool {
        guard let d = device(with: .keyboard) else { return false }
        tb_ei_device_keyboard_key(d, code, pressed)
        return true
    }

    /// A touch begins (`tb_ei_device_touch_new`, `tb_ei_touch_down`) or moves (`tb_ei_touch_motion`).
    public func touch(slot: UInt8, x: Double, y: Double) -> Bool {
        if let t = touches[slot] {
            guard devices.indices.contains(t.device), devices[t.device].emulating else { return false }
            devices[t.device].dirty = true
            tb_ei_touch_motion(t.touch, x, y)
            return true
        }
        guard let d = device(with: .touch), let i = index(of: d), let touch = tb_ei_device_touch_new(d) else { return false }
        touches[slot] = (touch, i)
        tb_ei_touch_down(touch, x, y)
        return true
    }

    /// A touch lifts (`tb_ei_touch_up`) and is let go. False when it was not down.
    public func touchUp(slot: UInt8) -> Bool {
        guard let t = touches.removeValue(forKey: slot) else { return false }
        if devices.indices.contains(t.device), devices[t.device].emulating {
            devices[t.device].dirty = true
            tb_ei_touch_up(t.touch)
        }
        Self.release(touch: t.touch)
        return true
    }

    /// Ends the frame of every device that changed (`tb_ei_device_frame`, at `tb_ei_now`: libei's
    /// monotonic microseconds). libei writes each event to the socket as it is made.
    public func frame() {
        guard let ei else { return }
        let now = tb_ei_now(ei)
        for i in devices.indices where devices[i].dirty {
            devices[i].dirty = false
            if devices[i].emulating { tb_ei_device_frame(devices[i].pointer, now) }
        }
    }

    /// Lets every touch and device go (`touchUp`, `tb_ei_device_stop_emulating`, `release`), disconnects (`tb_ei_disconnect`) and frees the context (`tb_ei_unref`). Idempotent.
    public func close() {
        guard let ei else { return }
        for slot in Array(touches.keys) { _ = touchUp(slot: slot) }
        frame()
        for d in devices {
            if d.emulating { tb_ei_device_stop_emulating(d.pointer) }
            Self.release(device: d.pointer)
        }
        devices = []
        tb_ei_disconnect(ei)
        Self.free(ei)
        self.ei = nil
    }

    /// Frees a context (`tb_ei_unref`).
    private static func free(_ ei: OpaquePointer) { _ = tb_ei_unref(ei) }

    /// Lets a device go (`tb_ei_device_unref`).
    private static func release(device: OpaquePointer) { _ = tb_ei_device_unref(device) }

    /// Lets a touch go (`tb_ei_touch_unref`).
    private static func release(touch: OpaquePointer) { _ = tb_ei_touch_unref(touch) }
}
