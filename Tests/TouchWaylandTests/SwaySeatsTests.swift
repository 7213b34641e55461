import Testing
import TouchCore
import TouchOutput
@testable import TouchWayland

/// SwaySeats' pure parts: sway's device identifiers and its version reply. (The seats themselves are
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
}
