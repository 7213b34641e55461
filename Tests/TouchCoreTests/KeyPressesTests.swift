// A keyboard that speaks evdev codes presses keys by the desktop's keymap: the key
// that produces the keysym, with Shift and AltGr around it when its level needs them.
import Testing
import TouchCore

private func k(_ c: Character) -> KeySym { KeySym(rawValue: UInt32(c.unicodeScalars.first!.value)) }
private typealias E = KeyPresses.Event

/// A piece of the French AZERTY map as the X server gives it (evdev codes = X keycodes − 8).
private let azerty = Keymap([
    (.shiftL, KeyPosition(evdevCode: 42)), (.controlL, KeyPosition(evdevCode: 29)),
    (.isoLevel3Shift, KeyPosition(evdevCode: 100)),
    (k("a"), KeyPosition(evdevCode: 16)), (k("z"), KeyPosition(evdevCode: 17)), (k("w"), KeyPosition(evdevCode: 44)),
    (k("q"), KeyPosition(evdevCode: 30)),
    (k("&"), KeyPosition(evdevCode: 2)), (k("1"), KeyPosition(evdevCode: 2, shift: true)),
    (k("à"), KeyPosition(evdevCode: 11)), (k("0"), KeyPosition(evdevCode: 11, shift: true)),
    (k("@"), KeyPosition(evdevCode: 11, levelThree: true)),
    (k("Z"), KeyPosition(evdevCode: 17, shift: true)),
    (k(","), KeyPosition(evdevCode: 50)), (k("?"), KeyPosition(evdevCode: 50, shift: true)),
    (k(";"), KeyPosition(evdevCode: 51)), (k("."), KeyPosition(evdevCode: 51, shift: true)),
], canBorrow: true)

@Suite struct KeyPressesTests {
    @Test func ctrlZOnAzertyPressesTheKeyThatMakesZ() {
        var keys = KeyPresses(), events: [E] = []
        for (sym, down) in [(KeySym.controlL, true), (k("z"), true), (k("z"), false), (.controlL, false)] {
            #expect(keys.key(sym, pressed: down, keymap: azerty, into: &events))
        }
        // KEY_W's place is where AZERTY has z: not the US position (KEY_Z, 44, which is w here).
        #expect(events == [E(29, true), E(17, true), E(17, false), E(29, false)])
        #expect(keys.held.isEmpty)
    }

    @Test func aDigitOnLevelTwoIsPressedWithShiftAroundIt() {
        var keys = KeyPresses(), events: [E] = []
        keys.key(.controlL, pressed: true, keymap: azerty, into: &events)
        keys.key(k("1"), pressed: true, keymap: azerty, into: &events)
        #expect(keys.codes == [29, 42, 2])
        keys.key(k("1"), pressed: false, keymap: azerty, into: &events)
        keys.key(.controlL, pressed: false, keymap: azerty, into: &events)
        #expect(events == [E(29, true), E(42, true), E(2, true), E(2, false), E(42, false), E(29, false)])
    }

    @Test func theChordsOwnShiftIsNotPressedTwiceNorReleasedEarly() {
        var keys = KeyPresses(), events: [E] = []
        for (sym, down) in [(KeySym.shiftL, true), (k("1"), true), (k("1"), false), (.shiftL, false)] {
            keys.key(sym, pressed: down, keymap: azerty, into: &events)
        }
        #expect(events == [E(42, true), E(2, true), E(2, false), E(42, false)])
    }

    @Test func aLevelThreeSymbolHoldsAltGr() {
        var keys = KeyPresses(), events: [E] = []
        keys.key(k("@"), pressed: true, keymap: azerty, into: &events)
        keys.key(k("@"), pressed: false, keymap: azerty, into: &events)
        #expect(events == [E(100, true), E(11, true), E(11, false), E(100, false)])
    }

    @Test func anAddedShiftStaysWhileAnotherHeldKeyNeedsIt() {
        var keys = KeyPresses(), events: [E] = []
        keys.key(k("1"), pressed: true, keymap: azerty, into: &events)
        keys.key(k("0"), pressed: true, keymap: azerty, into: &events)
        keys.key(k("1"), pressed: false, keymap: azerty, into: &events)
        #expect(keys.codes == [42, 11])
        keys.key(k("0"), pressed: false, keymap: azerty, into: &events)
        #expect(events == [E(42, true), E(2, true), E(11, true), E(2, false), E(11, false), E(42, false)])
    }

    @Test func aKeysymNoKeyProducesIsNotPressed() {
        var keys = KeyPresses(), events: [E] = []
        #expect(!keys.key(KeySym(rawValue: 0x1000041), pressed: true, keymap: azerty, into: &events))
        #expect(!azerty.canPress(KeySym(rawValue: 0x1000041)))
        #expect(events.isEmpty && keys.held.isEmpty)
    }

    @Test func aReleaseGoesWhereThePressWentAfterTheKeymapChanged() {
        var keys = KeyPresses(), events: [E] = []
        keys.key(k("z"), pressed: true, keymap: azerty, into: &events)
        keys.key(k("z"), pressed: false, keymap: Keymap.usFallback, into: &events)
        #expect(events == [E(17, true), E(17, false)])
    }

    @Test func releaseAllLetsGoOfKeysAndTheModifiersAddedForThem() {
        var keys = KeyPresses(), events: [E] = []
        keys.key(.controlL, pressed: true, keymap: azerty, into: &events)
        keys.key(k("@"), pressed: true, keymap: azerty, into: &events)
        events.removeAll()
        keys.releaseAll(into: &events)
        #expect(events == [E(11, false), E(100, false), E(29, false)])
        #expect(keys.held.isEmpty && keys.codes.isEmpty)
    }

    @Test func levelsNoKeyCanSelectAreLeftOut() {
        // No AltGr key: level 3 cannot be reached, so "@" is not pressable; no Shift key: nor is "1".
        let noModifiers = Keymap([(k("@"), KeyPosition(evdevCode: 11, levelThree: true)),
                                  (k("1"), KeyPosition(evdevCode: 2, shift: true)),
                                  (k("z"), KeyPosition(evdevCode: 17))], canBorrow: false)
        #expect(!noModifiers.canPress(k("@")) && !noModifiers.canPress(k("1")) && noModifiers.canPress(k("z")))
        #expect(noModifiers.shiftKey == nil && noModifiers.levelThreeKey == nil)
        #expect(azerty.shiftKey == 42 && azerty.levelThreeKey == 100)
    }

    @Test func theUSFallbackHasTheUSPositionsAndCapitalsOnLevelTwo() {
        let us = Keymap.usFallback
        #expect(us.position(of: k("z")) == KeyPosition(evdevCode: 44))
        #expect(us.position(of: k("Z")) == KeyPosition(evdevCode: 44, shift: true))
        #expect(us.position(of: k("1")) == KeyPosition(evdevCode: 2))
        #expect(us.position(of: KeySym(rawValue: 0xffc9)) == KeyPosition(evdevCode: 88))  // F12
        #expect(!us.canBorrow && us.shiftKey == 42)
    }
}
