// Further people on the uinput backend: each person's own devices, on a pointer of their own that the
// desktop's `PersonSeats` gives them (an X master, a sway seat).
import TouchCore
import TouchOutput

extension UInputBackend {
    /// From now on further people get devices of their own, put on their own pointer by `seats` (the
    /// desktop's); nil: one pointer for everyone (a person's actions are then refused).
    public func useSeats(_ seats: (any PersonSeats)?) {
        self.seats = seats
    }

    /// `person`'s actions, on their own devices, made at their first action; dropped (one failure) while
    /// the server has not yet put those devices on the person's own pointer.
    public func perform(_ actions: [OutputAction], as person: Person, typist: any CharacterTypist) -> [OutputError] {
        guard !actions.isEmpty, !closed else { return [] }
        guard let seats else {
            return [OutputError(origin: name, message: "\(person): uinput has one pointer for everyone on this desktop", kind: 7)]
        }
        guard !refused.contains(person) else {
            return [OutputError(origin: name, message: "\(person): their own pointer could not be made: input refused until they leave", kind: 7)]
        }
        let output: UInputBackend
        if let made = persons[person] {
            output = made
        } else {
            do throws(OutputError) {
                output = try makeDevices(for: person, seats: seats)
            } catch {
                return [error]
            }
        }
        guard seats.isReady(person) else {
            // Dropped whole. What their devices still hold from before (their pointer went, and is being
            // made again) is released first: a release dropped now would leave it held.
            if !output.held.isEmpty { _ = output.releaseAll() }
            return [OutputError(origin: name, message: "\(person): their own pointer is not ready yet (the display server has not attached their devices): input dropped", kind: 7)]
        }
        return output.perform(actions, typist: typist)
    }

    /// `person`'s devices, made now and handed to the seats (their input waits until the seats have them).
    public func personJoined(_ person: Person) -> [OutputError] {
        guard !closed, let seats, persons[person] == nil, !refused.contains(person) else { return [] }
        do throws(OutputError) {
            _ = try makeDevices(for: person, seats: seats)
            return []
        } catch {
            return [error]
        }
    }

    /// `person`'s seat, then their devices (sway puts each on the seat as it comes; Xorg's are attached
    /// once it has added them). A person whose seat or devices could not be made is refused until they
    /// leave: trying again at every action would make and destroy devices in a loop.
    private func makeDevices(for person: Person, seats: any PersonSeats) throws(OutputError) -> UInputBackend {
        let names = DeviceNames.person(person)
        do throws(OutputError) {
            try seats.make(person, devices: names.seatDevices(touchscreen: wantsTouchscreen && screenSize != nil,
                                                               touchpad: touchpadMM != nil))
        } catch {
            refused.insert(person)
            throw error
        }
        let output: UInputBackend
        do throws(UInputError) {
            output = try UInputBackend(touchscreen: wantsTouchscreen, touchpadMM: touchpadMM, path: path, names: names)
        } catch {
            refused.insert(person)
            _ = try? seats.remove(person)
            throw error.output
        }
        if let keymap { output.setKeymap(keymap) }
        persons[person] = output
        if let size = screenSize { try output.setScreen(width: size.width, height: size.height) }
        return output
    }

    /// `person`'s devices and pointer go, or, where the seats keep a person's devices (`keepsDevices`:
    /// sway's), what they hold is released and the devices stay for whoever comes next at their place.
    public func personLeft(_ person: Person) -> (removed: [String], errors: [OutputError]) {
        refused.remove(person)
        guard let output = persons[person] else { return ([], []) }
        if let seats, seats.keepsDevices {
            let (released, errors) = output.releaseAll()
            let what = released.isEmpty ? "" : ", released \(released.joined(separator: ", "))"
            return (["nothing (their devices stay on their seat for whoever comes next at their place\(what))"], errors)
        }
        return removeDevices(of: person)
    }

    /// `person`'s devices are destroyed, then their pointer goes.
    private func removeDevices(of person: Person) -> (removed: [String], errors: [OutputError]) {
        guard let output = persons.removeValue(forKey: person) else { return ([], []) }
        var (removed, errors) = output.close()
        if let seats {
            do throws(OutputError) { removed += try seats.remove(person) } catch { errors.append(error) }
        }
        return (removed, errors)
    }

    /// Every further person's devices and pointer go (the desktop closes, or the daemon stops), kept ones
    /// too, once the seats have had the time they need (`beforeDevicesGo`).
    public func peopleLeave() -> (removed: [String], errors: [OutputError]) {
        var removed: [String] = [], errors: [OutputError] = []
        refused.removeAll()
        if !persons.isEmpty, let waited = seats?.beforeDevicesGo() { removed.append(waited) }
        for person in persons.keys.sorted() {
            let (r, e) = removeDevices(of: person)
            removed += r
            errors += e
        }
        return (removed, errors)
    }

    public func devicesChanged() -> [String] {
        guard let seats, !persons.isEmpty else { return [] }
        return seats.settle()
    }
}

/// The names of one set of devices, as the display server shows them: the main set's ("touchbridge
/// pointer", …) or a further person's ("touchbridge pointer 2 #3fa2", …), which their seat is told. A
/// further person's names end with this run's tag, so that no rule a display server keeps by name from an
/// earlier run (sway's seat rules, kept for its whole session) applies to this run's devices.
public struct DeviceNames: Sendable, Equatable {
    /// Nil for the main set.
    public let person: Person?
    /// This run's tag (`runTag`), for a further person's set.
    public let tag: String
    public var pointer: String { name("pointer") }
    public var keyboard: String { name("keyboard") }
    public var touchscreen: String { name("touchscreen") }
    public var pen: String { name("pen") }
    public var touchpad: String { name("touchpad") }

    /// The devices of a further person's set as their seat is told them, before they exist: the pointer,
    /// the keyboard, the touchscreen (once the screen is known) and the native touchpad (when there is one).
    public func seatDevices(touchscreen: Bool, touchpad hasTouchpad: Bool) -> [SeatDevice] {
        var devices = [SeatDevice(name: pointer, vendor: UInputDevice.vendor, product: UInputPointer.product, isKeyboard: false),
                       SeatDevice(name: keyboard, vendor: UInputDevice.vendor, product: UInputKeyboard.product, isKeyboard: true)]
        if touchscreen {
            devices.append(SeatDevice(name: self.touchscreen, vendor: UInputDevice.vendor, product: UInputTouchscreen.product, isKeyboard: false))
        }
        if hasTouchpad {
            devices.append(SeatDevice(name: touchpad, vendor: UInputDevice.vendor, product: UInputTouchpad.product, isKeyboard: false))
        }
        return devices
    }

    public static let main = DeviceNames(person: nil, tag: "")
    public static func person(_ person: Person, tag: String = runTag) -> DeviceNames { DeviceNames(person: person, tag: tag) }

    /// Four hex digits drawn once per run.
    public static let runTag: String = {
        let digits = String(UInt16.random(in: 0...UInt16.max), radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }()

    private func name(_ kind: String) -> String {
        person.map { "touchbridge \(kind) \($0.rawValue) #\(tag)" } ?? "touchbridge \(kind)"
    }
}
