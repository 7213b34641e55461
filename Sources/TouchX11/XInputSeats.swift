import TouchCore
import TouchOutput

/// Further people's own pointers for kernel devices that Xorg reads itself (uinput, through its libinput
/// driver): each person gets a master pointer and keyboard (`touchbridge person N`, as with XTest), and their
/// devices, once Xorg has added and enabled them, are attached to it (`XIChangeHierarchy`). Xorg adds a new
/// device to the core pointer or keyboard first, so a person is ready only once every one of their devices is
/// enabled and on their own master; `settle` runs again at every change of the hierarchy, and attaches
/// again a device that went back (the server enabling it, someone's `xinput reattach`).
///
/// A master someone else removed (`xinput remove-master`) is made again at the next `settle`, and the
/// person's devices attached to it; meanwhile they are on the core pointer and the person is not ready.
///
/// Not thread-safe: owned by the same single thread as the `XDisplay`.
public final class XInputSeats: PersonSeats {
    private let pointers: PersonPointers
    private struct Seat {
        var master: XInputDeviceInfo
        let devices: [SeatDevice]
        var ready = false
    }
    private var seats: [Person: Seat] = [:]

    /// On `display`; throws when the server does not speak XInput 2.
    public init(display: XDisplay) throws(X11Error) {
        pointers = try PersonPointers(display: display)
    }

    public func make(_ person: Person, devices: [SeatDevice]) throws(OutputError) {
        do throws(X11Error) {
            let (master, _) = try pointers.makeMaster(person)
            seats[person] = Seat(master: master, devices: devices)
        } catch {
            throw error.output
        }
        _ = settle()
    }

    public func isReady(_ person: Person) -> Bool { seats[person]?.ready ?? false }

    public func settle() -> [String] {
        guard !seats.isEmpty else { return [] }
        var notes: [String] = []
        do throws(X11Error) {
            var devices = try pointers.display.queryDevices()
            var attached = false
            for person in seats.keys.sorted() {
                guard var seat = seats[person] else { continue }
                let master = seat.master
                if !devices.contains(where: { $0.id == master.id && $0.use == .masterPointer && $0.name == master.name }) {
                    // Removed by someone else: their devices went back to the core pointer; made again.
                    seat.ready = false
                    let made = try pointers.makeMaster(person)
                    seat.master = made.master
                    devices = made.devices
                    notes.append("\(person): their pointer \"\(master.name)\" was removed by someone else: made again")
                }
                var ready = true
                for wanted in seat.devices {
                    let target = wanted.isKeyboard ? seat.master.attachment : seat.master.id
                    let found = devices.filter { $0.name == wanted.name && [.slavePointer, .slaveKeyboard, .floatingSlave].contains($0.use) }
                    if found.isEmpty { ready = false }
                    for device in found {
                        if !device.enabled { ready = false }
                        if device.use == .floatingSlave || device.attachment != target {
                            try pointers.display.attachSlave(device.id, to: target)
                            attached = true
                        }
                    }
                }
                if ready && !seat.ready { notes.append("\(person): their devices are on their own pointer \"\(seat.master.name)\"") }
                seat.ready = ready
                seats[person] = seat
            }
            if attached { try pointers.display.sync() }
        } catch {
            for person in seats.keys { seats[person]?.ready = false }
            notes.append("people's pointers: \(error)")
        }
        return notes
    }

    public func remove(_ person: Person) throws(OutputError) -> [String] {
        guard let seat = seats.removeValue(forKey: person) else { return [] }
        do throws(X11Error) {
            guard try pointers.display.queryDevices().contains(where: { $0.id == seat.master.id && $0.name == seat.master.name }) else {
                return []
            }
            try pointers.removeMaster(seat.master.id)
        } catch {
            throw error.output
        }
        return ["\"\(seat.master.name)\""]
    }
}
