import TouchCore
import TouchOutput

/// The uinput input backend: its factory (`make`) makes the kernel devices, which are the only proof that
/// /dev/uinput works, and says what they can do. The devices need no display server: every desktop
/// opened gets the same output, and they are destroyed only when the daemon stops (`close`).
public final class UInputDevices: InputBackend {
    public let devices: UInputBackend
    public let capabilities: OutputCapabilities
    public var name: String { "uinput" }

    private init(devices: UInputBackend, personSeats: Bool) {
        self.devices = devices
        // Every finger a real touch in touchscreen mode, the pen tablet in pen mode, hi-res wheels, and
        // the native touchpad in touchpad mode when it was made; no pointer per finger.
        capabilities = OutputCapabilities(realTouches: true, penTablet: true, nativeTouchpad: devices.touchpad != nil,
                                          smoothScroll: true, extraPointers: false, personPointers: personSeats)
    }

    /// The factory: the pointer, the keyboard and (once the screen is known) the touchscreen and pen
    /// tablet; with `touchpadMM` (the phone's surface, width and height in mm) a native touchpad of that
    /// size. `penSurfaceMM`: the long side of the glass the pen draws on (`UInputBackend.init`).
    /// `personSeats`: the desktop can give further people a pointer of their own (Xorg's masters, sway's
    /// seats), so each gets devices of their own.
    public static func make(touchpadMM: (width: Double, height: Double)?, penSurfaceMM: Double,
                            path: String, personSeats: Bool = false) -> Result<any InputBackend, OutputError> {
        do throws(UInputError) {
            return .success(UInputDevices(devices: try UInputBackend(touchscreen: true, touchpadMM: touchpadMM,
                                                                     penSurfaceMM: penSurfaceMM, path: path),
                                          personSeats: personSeats))
        } catch {
            return .failure(error.output)
        }
    }

    /// The devices, which from now on give further people devices of their own on the desktop's seats
    /// (when the capabilities say so and the desktop has them).
    public func output(on desktop: any Desktop) throws(OutputError) -> any InputOutput {
        devices.useSeats(capabilities.personPointers ? desktop.seats : nil)
        return devices
    }

    /// Further people's devices and pointers go with the desktop they are on; the main devices outlive
    /// it (the host released what they held when it detached).
    public func desktopClosing() -> (removed: [String], errors: [OutputError]) {
        let gone = devices.peopleLeave()
        devices.useSeats(nil)
        return gone
    }

    /// What they hold is released, then the kernel destroys them.
    public func close() -> (removed: [String], errors: [OutputError]) { devices.close() }
}
