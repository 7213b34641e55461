import Testing
import TouchCore
import TouchOutput
@testable import TouchWayland

/// SwaySeats' pure parts: sway's device identifiers, its version and seats replies, Xwayland's devices. (The seats themselves are
/// tested against a real sway in the VM: Tests/VM/guest/waylandtest.py.)
@Suite struct SwaySeatsTests {
    @Test func aDeviceIsNamedAsSwayNamesIt() {
        let device = SeatDevice(name: "touchbridge pointer 2 #3fa2", vendor: 29794, product: 3, isKeyboard: false)
        #expect(SwaySeats.identifier(device) == "29794:3:touchbridge_pointer_2_#3fa2")
        let odd = SeatDevice(name: "a\tb\u{e9}", vendor: 1, product: 2, isKeyboard: true)
        #expect(SwaySeats.identifier(odd) == "1:2:a_b_")
    }

    @Test func theVersionIsReadFromSwaysReply() throws {
        let reply = #"{ "human_readable": "1.7", "variant": "sway", "major": 1, "minor": 7, "patch": 0, "loaded_config_file_name": "/share/sway.config" }"#
        let v = try #require(SwaySeats.parseVersion(reply))
        #expect(v.major == 1 && v.minor == 7)
        let newer = try #require(SwaySeats.parseVersion("{\n  \"major\": 1,\n  \"minor\": 10,\n  \"patch\": 1\n}"))
        #expect(newer.major == 1 && newer.minor == 10)
        #expect(SwaySeats.parseVersion(#"[ { "success": false } ]"#) == nil)
        #expect(SwaySeats.parseVersion(#"{ "major": "x", "minor": 7 }"#) == nil)
    }

    @Test func theSeatsNameCarriesThePersonsNumber() {
        #expect(SwaySeats.seatName(Person(rawValue: 3)) == "touchbridge-person-3")
    }

    @Test func theSeatsWithAPointerAreCountedFromSwaysReply() {
        // As sway 1.7's GET_SEATS says it: capabilities 7 (pointer, keyboard, touch), 2 (keyboard only), 0,
        // 3, and a device whose name quotes the key (escaped in JSON, so not a seat's).
        let reply = #"""
        [ { "name": "seat0", "capabilities": 7, "focus": 12, "devices": [ { "identifier": "1:1:kbd", "name": "kbd", "type": "keyboard", "libinput": { "send_events": "enabled" } } ] },
          { "name": "touchbridge-person-2", "capabilities": 2, "focus": 0, "devices": [ { "name": "\"capabilities\": 1", "type": "keyboard" } ] },
          { "name": "touchbridge-person-3", "capabilities":0, "focus": 0, "devices": [ ] },
          { "name": "touchbridge-person-4", "capabilities":3, "focus": 0, "devices": [ ] } ]
        """#
        #expect(SwaySeats.seatsWithPointer(reply) == 2)
        #expect(SwaySeats.seatsWithPointer("[ ]") == 0)
        #expect(SwaySeats.seatsWithPointer(#"[ { "success": false } ]"#) == 0)
    }

    @Test func xwaylandsRelativePointersAreCountedFromItsDevices() {
        let devices = ["Virtual core pointer", "Virtual core XTEST pointer", "xwayland-pointer:13",
                       "xwayland-relative-pointer:13", "xwayland-keyboard:13", "xwayland-relative-pointer:31"]
        #expect(SwaySeats.relativePointers(devices) == 2)
        #expect(SwaySeats.relativePointers(["xwayland-keyboard:13"]) == 0)
        // Not Xwayland (Xvfb, Xorg), or not asked: nothing to count.
        #expect(SwaySeats.relativePointers(["Virtual core pointer", "Virtual core keyboard"]) == nil)
        #expect(SwaySeats.relativePointers(nil) == nil)
    }
}
