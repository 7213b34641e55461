// The tests' model X keyboard (the borrowed keycode, and the `.cannotType` reply): the random-sequence property
// test's desktop has a keyboard map that a third party changes between any two steps (the user's `xmodmap` on
// one keycode, a `setxkbmap` layout switch), and the real `KeycodeBorrower` borrows and gives back on it. Its
// own file, so the generator's other cases and these merge apart.
import TouchCore
import TouchTestSupport
import TouchOutput
import TouchWire
import TouchX11

/// What the desktop of a random sequence is, chosen per sequence.
enum ModelDesktopKind: CustomStringConvertible {
    /// No keyboard map of its own: the generator's `keymap` inputs are handed to the Bridge as they come.
    case abstract
    /// An X server: a model keyboard (`ModelKeyboard`) that `xmodmap` and `setxkbmap` change, the real
    /// `KeycodeBorrower` on it, and keys pressed by level as XTest presses them (`ModelXOutput`).
    case x11
    /// A desktop that cannot type a character no key makes (GNOME's Mutter: no virtual keyboard, a keymap
    /// that cannot be changed): the Bridge must refuse it with `.cannotType` and type the rest.
    case cannotType

    var description: String {
        switch self {
        case .abstract: return "abstract"
        case .x11: return "X11"
        case .cannotType: return "cannot type (GNOME)"
        }
    }
}

/// Which keycode a third party's `xmodmap -e "keycode N = ..."` changes, named by what it is when it runs.
enum XmodmapTarget: CustomStringConvertible {
    /// The n-th keycode the borrower holds now (modulo their count); the next empty one when it holds none.
    case borrowed(Int)
    /// The keycode the borrower would pick next: the highest empty one now.
    case nextEmpty
    /// A keycode of the layout (a letter, a digit, Shift).
    case code(UInt8)

    var description: String {
        switch self {
        case .borrowed(let n): return "borrowed #\(n)"
        case .nextEmpty: return "the next empty keycode"
        case .code(let c): return "keycode \(c)"
        }
    }
}

/// A layout as `setxkbmap` loads it: each keycode's keysyms by level (1: plain, 2: Shift, 3: AltGr, 4: both).
struct ModelLayout {
    var name: String
    var codes: [[UInt]]

    /// Keysyms the layouts share (modifiers, navigation, function and media keys), and filler keysyms on
    /// every keycode but the last `empty` (and 8), as a real layout leaves only a few keycodes empty.
    private static func base(empty: Int) -> [[UInt]] {
        var c = [[UInt]](repeating: [], count: 256)
        for code in 200..<(256 - empty) { c[code] = [0x1008_1000 + UInt(code)] }
        let named: [(Int, UInt)] = [
            (9, 0xff1b), (22, 0xff08), (23, 0xff09), (36, 0xff0d), (37, 0xffe3), (50, 0xffe1), (62, 0xffe2),
            (64, 0xffe9), (133, 0xffeb), (110, 0xff50), (115, 0xff57), (112, 0xff55), (117, 0xff56),
            (113, 0xff51), (114, 0xff53), (111, 0xff52), (116, 0xff54), (65, 0x20), (121, 0x1008ff12),
        ]
        for (code, sym) in named { c[code] = [sym] }
        for f in 0..<10 { c[67 + f] = [0xffbe + UInt(f)] }  // F1...F10
        return c
    }

    static let us: ModelLayout = {
        var c = base(empty: 8)
        let digits: [UInt] = [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x30]
        let shifted: [UInt] = [0x21, 0x40, 0x23, 0x24, 0x25, 0x5e, 0x26, 0x2a, 0x28, 0x29]
        for i in 0..<10 { c[10 + i] = [digits[i], shifted[i]] }
        c[20] = [0x2d, 0x5f]  // minus underscore
        c[21] = [0x3d, 0x2b]  // equal plus
        for (code, letter) in [(24, 0x71), (25, 0x77), (26, 0x65), (38, 0x61), (52, 0x7a), (56, 0x62)] as [(Int, UInt)] {
            c[code] = [letter, letter - 0x20]
        }
        c[47] = [0x3b, 0x3a]  // semicolon colon
        c[59] = [0x2c, 0x3c]  // comma less
        c[60] = [0x2e, 0x3e]  // period greater
        c[108] = [0xffea]     // Alt_R
        return ModelLayout(name: "us", codes: c)
    }()

    static let fr: ModelLayout = {
        var c = base(empty: 3)
        let plain: [UInt] = [0x26, 0xe9, 0x22, 0x27, 0x28, 0x2d, 0xe8, 0x5f, 0xe7, 0xe0]
        let digits: [UInt] = [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x30]
        let third: [UInt] = [0, 0x7e, 0x23, 0x7b, 0x5b, 0x7c, 0x60, 0x5c, 0x5e, 0x40]
        for i in 0..<10 { c[10 + i] = third[i] == 0 ? [plain[i], digits[i]] : [plain[i], digits[i], third[i], 0] }
        c[20] = [0x29, 0xb0]  // parenright degree
        c[21] = [0x3d, 0x2b, 0x7d, 0]  // equal plus braceright
        for (code, letter) in [(24, 0x61), (25, 0x7a), (38, 0x71), (52, 0x77), (56, 0x62)] as [(Int, UInt)] {
            c[code] = [letter, letter - 0x20]
        }
        c[26] = [0x65, 0x45, 0x20ac, 0]  // e E EuroSign
        c[58] = [0x2c, 0x3f]  // comma question
        c[59] = [0x3b, 0x2e]  // semicolon period
        c[60] = [0x3a, 0x2f]  // colon slash
        c[61] = [0x21, 0xa7]  // exclam section
        c[108] = [0xfe03]     // ISO_Level3_Shift (AltGr)
        return ModelLayout(name: "fr", codes: c)
    }()

    static func named(_ name: String) -> ModelLayout { name == "fr" ? fr : us }
}

/// The X server's keyboard map as the borrower and the model output see it. Any call of the borrower may
/// fail (`failPercent`); a failed call changes nothing. Who wrote each keycode last is kept, and checked on
/// every write of the borrower:
/// - it may write only on a keycode that is empty, or that still carries what it wrote itself;
/// - so giving back never wipes what the user (or a layout) put there meanwhile.
final class ModelKeyboard: KeyboardMapping {
    enum Writer: Equatable { case layout, user, borrower }

    var codes: [[UInt]]
    var writer: [Writer]
    var layout: String
    var pressed: Set<UInt8> = []
    var properties: [UInt: [UInt32]] = [:]
    var atoms: [String: UInt] = [:]
    /// Bumped on every change of the map (a `MappingNotify` / `XkbMapNotify` for the daemon), and on a
    /// third party's.
    var generation = 0
    var thirdPartyGeneration = 0
    /// Whether the map is the layout's as `setxkbmap` loaded it (no `xmodmap` since).
    var pristine = true
    /// The layouts' own readings, read once.
    static let usKeymap = ModelKeyboard(layout: .us, seed: 0, failPercent: 0).read(borrowing: true)
    static let frKeymap = ModelKeyboard(layout: .fr, seed: 0, failPercent: 0).read(borrowing: true)
    static let usFixed = ModelKeyboard(layout: .us, seed: 0, failPercent: 0).read(borrowing: false)
    static let frFixed = ModelKeyboard(layout: .fr, seed: 0, failPercent: 0).read(borrowing: false)
    private func read(borrowing: Bool) -> Keymap {
        pristine = false
        return keymap(excluding: [], borrowing: borrowing)
    }
    /// The keycodes whose keysyms the borrower wrote (and nobody changed since).
    var borrowerCodes: Set<Int> = []
    /// The keysym each press of a key produced (by the modifiers held then), in order.
    var produced: [(code: UInt8, keysym: UInt)] = []
    /// The first broken promise.
    var violation: String?
    var rng: SplitMix64
    var failPercent: Int

    init(layout: ModelLayout, seed: UInt64, failPercent: Int) {
        codes = layout.codes
        writer = layout.codes.map { _ in .layout }
        self.layout = layout.name
        rng = SplitMix64(seed: seed ^ 0x6b65_796d_6f64_656c)
        self.failPercent = failPercent
    }

    private func fail(_ what: String) throws(X11Error) {
        if Int.random(in: 0..<100, using: &rng) < failPercent { throw .requestFailed("model: \(what) failed") }
    }

    static func nonEmpty(_ syms: [UInt]) -> Bool { syms.contains { $0 != 0 } }

    // MARK: the third party

    /// `setxkbmap LAYOUT`: every keycode as the layout has it (a borrowed one included).
    func setxkbmap(_ l: ModelLayout) {
        codes = l.codes
        writer = l.codes.map { _ in .layout }
        layout = l.name
        pristine = true
        generation += 1
        thirdPartyGeneration += 1
        borrowerCodes = []
    }

    /// `xmodmap -e "keycode N = ..."` (no keysym: `keycode N =`, emptied).
    func xmodmap(_ code: UInt8, _ syms: [UInt]) {
        codes[Int(code)] = syms
        writer[Int(code)] = .user
        pristine = false
        generation += 1
        thirdPartyGeneration += 1
        borrowerCodes.remove(Int(code))
    }

    /// The highest keycode empty now (what `emptyKeyCode` returns), without failing.
    var highestEmpty: UInt8? {
        (8...255).reversed().first { !Self.nonEmpty(codes[$0]) }.map { UInt8($0) }
    }

    // MARK: KeyboardMapping (what the borrower calls)

    func emptyKeyCode() throws(X11Error) -> KeyCode? {
        try fail("reading the keyboard map")
        return highestEmpty.map { KeyCode(rawValue: $0) }
    }

    func keysyms(of code: KeyCode) throws(X11Error) -> [UInt] {
        try fail("reading keycode \(code.rawValue)")
        return codes[Int(code.rawValue)]
    }

    func setKeysyms(_ keysyms: [UInt], of code: KeyCode) throws(X11Error) {
        try fail("mapping keycode \(code.rawValue)")
        let c = Int(code.rawValue)
        if Self.nonEmpty(codes[c]) && writer[c] != .borrower && violation == nil {
            let whose = writer[c] == .user ? "the user's" : "the layout's"
            violation = Self.nonEmpty(keysyms)
                ? "the borrower took keycode \(c), which carried \(whose) \(hex(codes[c])), to write \(hex(keysyms))"
                : "giving back wiped \(whose) \(hex(codes[c])) on keycode \(c)"
        }
        codes[c] = keysyms
        writer[c] = Self.nonEmpty(keysyms) ? .borrower : .layout
        if writer[c] == .borrower { borrowerCodes.insert(c) } else { borrowerCodes.remove(c) }
        generation += 1
    }

    func fakeKey(_ code: KeyCode, pressed down: Bool) throws(X11Error) {
        try fail("pressing keycode \(code.rawValue)")
        if down {
            pressed.insert(code.rawValue)
            produced.append((code.rawValue, keysym(pressedOn: code.rawValue)))
        } else {
            pressed.remove(code.rawValue)
        }
    }

    func sync() throws(X11Error) { try fail("sync") }

    func atom(_ name: String) throws(X11Error) -> UInt {
        try fail("interning \(name)")
        if let a = atoms[name] { return a }
        atoms[name] = UInt(atoms.count + 300)
        return atoms[name]!
    }

    func rootCardinals(_ atom: UInt) throws(X11Error) -> [UInt32]? {
        try fail("reading a root property")
        return properties[atom]
    }

    func setRootCardinals(_ atom: UInt, _ values: [UInt32]) throws(X11Error) {
        try fail("setting a root property")
        properties[atom] = values
    }

    func deleteRootProperty(_ atom: UInt) throws(X11Error) {
        try fail("deleting a root property")
        properties[atom] = nil
    }

    // MARK: what keys make

    /// What pressing `code` makes with the keys held now: its level by the Shift and AltGr keys held (a
    /// one-level key makes its one keysym whatever is held; a two-level one ignores AltGr).
    func keysym(pressedOn code: UInt8) -> UInt {
        let syms = codes[Int(code)]
        guard !syms.isEmpty else { return 0 }
        func holds(_ sym: UInt) -> Bool { pressed.contains { $0 != code && codes[Int($0)].first == sym } }
        let shift = holds(0xffe1) || holds(0xffe2)
        let three = holds(0xfe03)
        switch syms.count {
        case 1: return syms[0]
        case 2, 3: return syms[shift ? 1 : 0]
        default: return syms[(shift ? 1 : 0) + (three ? 2 : 0)]
        }
    }

    /// The map as `XDisplay.keymap(of:excluding:)` reads it: every keysym of group 1 at the lowest level
    /// (then keycode) that Shift and AltGr select, the keycodes in `excluding` (borrowed) left out;
    /// `canBorrow` when one is borrowed or one is empty.
    func keymap(excluding: Set<KeyCode>, borrowing: Bool = true) -> Keymap {
        if excluding.isEmpty, pristine {
            return layout == "fr" ? (borrowing ? Self.frKeymap : Self.frFixed) : (borrowing ? Self.usKeymap : Self.usFixed)
        }
        let codes = self.codes
        var keys: [(KeySym, KeyPosition)] = []
        keys.reserveCapacity(160)
        if codes[108].first == 0xfe03 { keys.append((.isoLevel3Shift, KeyPosition(evdevCode: 100))) }
        // Lower levels first, then lower keycodes.
        for level in 0..<4 {
            for code in 9...255 where codes[code].count > level && codes[code][level] != 0
                && !excluding.contains(KeyCode(rawValue: UInt8(code))) {
                keys.append((KeySym(rawValue: UInt32(truncatingIfNeeded: codes[code][level])),
                             KeyPosition(evdevCode: UInt16(code - 8), shift: level % 2 == 1, levelThree: level >= 2)))
            }
        }
        return Keymap(keys, canBorrow: borrowing && (!excluding.isEmpty || highestEmpty != nil))
    }
}

func hex(_ syms: [UInt]) -> String { "[" + syms.map { "0x" + String($0, radix: 16) }.joined(separator: " ") + "]" }

/// The model keyboard as the X server `XTestOutput` talks to: its keys (`fakeKey`, which may fail as the
/// borrower's calls may) and its map (`keyCode(for:)`, for a key pressed with no keymap known); the
/// pointer's requests do nothing here, and a person's own devices are not the model's.
extension ModelKeyboard: XTestRequests {
    var isLost: Bool { false }
    func fakeMotion(to point: PixelPoint) throws(X11Error) {}
    func fakeRelativeMotion(dx: Int32, dy: Int32) throws(X11Error) {}
    func fakeButton(_ button: PointerButton, pressed: Bool) throws(X11Error) {}
    func keyCode(for keysym: KeySym) throws(X11Error) -> KeyCode {
        guard let code = (8...255).first(where: { codes[$0].contains(UInt(keysym.rawValue)) }) else {
            throw .requestFailed("model: no keycode carries \(hex([UInt(keysym.rawValue)]))")
        }
        return KeyCode(rawValue: UInt8(code))
    }
    func fakeDeviceMotion(_ device: OpenedDevice, to point: PixelPoint) throws(X11Error) { throw .requestFailed("model: no person's devices") }
    func fakeDeviceMotion(_ device: OpenedDevice, dx: Int32, dy: Int32) throws(X11Error) { throw .requestFailed("model: no person's devices") }
    func fakeDeviceButton(_ device: OpenedDevice, _ button: PointerButton, pressed: Bool) throws(X11Error) { throw .requestFailed("model: no person's devices") }
    func fakeDeviceKey(_ device: OpenedDevice, _ code: KeyCode, pressed: Bool) throws(X11Error) { throw .requestFailed("model: no person's devices") }
    func flushXTest() throws(X11Error) {}
    func flush() throws(X11Error) {}
}

/// XTest on the model keyboard: the real `XTestOutput`, whose X server is the model keyboard, with the real
/// `KeycodeBorrower` typing what no key makes (as the X11 desktop does for it). Checks that each key it
/// presses makes the keysym asked for on the keyboard as it is now, and that what it types on a borrowed
/// keycode is that character.
final class ModelXOutput: CharacterTypist {
    let keyboard: ModelKeyboard
    let borrower: KeycodeBorrower
    let output: XTestOutput
    /// The keymap the daemon read last (handed to the output and the Bridge), and whether it may be out of
    /// date (the last reading failed, or a change is not heard yet): the level is not checked then.
    var keymap: Keymap?
    var stale = false
    var readGeneration = -1
    private var lostChecked = (-1, -1)
    private var lastRead: (Int, Set<KeyCode>)?
    var violation: String?
    /// The keysyms the Bridge's actions hold down now (to tell a chord's own Shift or AltGr).
    private var down: Set<KeySym> = []

    init(keyboard: ModelKeyboard) {
        self.keyboard = keyboard
        borrower = KeycodeBorrower(display: keyboard)
        output = XTestOutput(display: keyboard)
    }

    /// What the daemon does on a keymap change (`BridgeHost.readKeymap` → `X11Desktop.keymap`): the borrowed
    /// keycodes the user mapped are forgotten, the map is read without the borrowed ones; a new keymap is
    /// handed to the output and returned (for the Bridge), nil when it is the same or could not be read.
    func readKeymapIfChanged() -> Keymap? {
        guard keyboard.generation != readGeneration else { return nil }
        readGeneration = keyboard.generation
        do throws(X11Error) {
            try borrower.forgetTheUsers()
        } catch {
            stale = true
            return nil
        }
        stale = false
        // The map but the borrowed keycodes changes only by a third party, or when what is borrowed changes
        // (the borrower writes only on keycodes it holds): the same reading as the last then.
        let readKey = (keyboard.thirdPartyGeneration, borrower.codes)
        if let last = lastRead, last == readKey { return nil }
        lastRead = readKey
        let read = keyboard.keymap(excluding: readKey.1)
        guard read != keymap else { return nil }
        keymap = read
        output.setKeymap(read)
        return read
    }

    private func record(_ what: String) {
        if violation == nil { violation = what }
    }

    func perform(_ actions: [OutputAction]) {
        for a in actions {
            switch a {
            case .key(let k, let pressed):
                check(k, pressing: pressed) { output.perform([a], typist: self) }
                if pressed { down.insert(k) } else { down.remove(k) }
            case .type(let k):
                if let keymap, keymap.canPress(k), !down.contains(k) {
                    check(k, pressing: true) { output.perform([a], typist: self) }
                } else {
                    _ = output.perform([a], typist: self)
                }
            case .restoreKeymap:
                _ = output.perform([a], typist: self)
            default:
                continue
            }
        }
    }

    /// Runs `body`, one action of the output; when it pressed `k` on its key by the keymap, checks what the
    /// key made (not when a request failed, the keymap may be out of date, a chord's own Shift or AltGr is
    /// held, or a key a failed release left down shifts what the next one makes).
    private func check(_ k: KeySym, pressing: Bool, _ body: () -> [OutputError]) {
        let chordShifts = down.contains { [.shiftL, .shiftR, .isoLevel3Shift].contains($0) && $0 != k }
        let strays = !keyboard.pressed.isSubset(of: Set(output.pressedKeys.map(\.rawValue)))
        let before = keyboard.produced.count
        let errors = body()
        guard pressing, errors.isEmpty, let keymap, keymap.canPress(k), !stale, !chordShifts, !strays,
              let main = keyboard.produced[before...].last else { return }
        if main.keysym != UInt(k.rawValue) {
            record("pressing \(hex([UInt(k.rawValue)])) on the \(keyboard.layout) layout made \(hex([main.keysym])) (keycode \(main.code), held \(keyboard.pressed.sorted()))")
        }
    }

    // MARK: CharacterTypist (the X11 desktop's part: the borrower)

    func typeLacking(_ k: KeySym) throws(OutputError) {
        let before = keyboard.produced.count
        do throws(X11Error) {
            try borrower.type(k)
        } catch {
            throw OutputError(origin: "model", message: "\(error)", kind: error.kindIndex)
        }
        let made = keyboard.produced[before...]
        if made.count != 1 || made.first!.keysym != UInt(k.rawValue) {
            record("typing \(hex([UInt(k.rawValue)])) on a borrowed keycode made \(made.map { "\(hex([$0.keysym])) on \($0.code)" })")
        }
    }

    func restoreKeymap() throws(OutputError) {
        do throws(X11Error) { _ = try borrower.restore() } catch {
            throw OutputError(origin: "model", message: "\(error)", kind: error.kindIndex)
        }
    }

    /// Nothing pressed; nothing borrowed; no keycode still carries what the borrower wrote.
    func leftBehind() -> String? {
        if !keyboard.pressed.isEmpty { return "keycodes still pressed: \(keyboard.pressed.sorted())" }
        if !borrower.borrowed.isEmpty { return "keycodes still borrowed: \(borrower.borrowed.map(\.code.rawValue))" }
        if let c = (8...255).first(where: { keyboard.writer[$0] == .borrower && ModelKeyboard.nonEmpty(keyboard.codes[$0]) }) {
            return "keycode \(c) still carries what the borrower wrote: \(hex(keyboard.codes[c]))"
        }
        if keyboard.properties.values.contains(where: { !$0.isEmpty }) { return "the root window's note of borrowed keycodes is left" }
        return nil
    }

    /// A keycode that carries what the borrower wrote but that it no longer holds: it will never be given back.
    func lost() -> String? {
        // Only a change of the map or of what the borrower holds can lose one.
        let state = (keyboard.generation, borrower.borrowed.count)
        guard state != lostChecked else { return nil }
        lostChecked = state
        let held = borrower.codes
        if let c = keyboard.borrowerCodes.sorted().first(where: { ModelKeyboard.nonEmpty(keyboard.codes[$0]) && !held.contains(KeyCode(rawValue: UInt8($0))) }) {
            return "keycode \(c) carries what the borrower wrote (\(hex(keyboard.codes[c]))) but the borrower forgot it"
        }
        return nil
    }
}

extension InputGenerator {
    /// What the user maps with `xmodmap`: function keys, a keysym a layout has elsewhere, a letter, nothing.
    /// Never the Unicode keysym of a character the page types (the borrower could not tell it from its own).
    static let userKeysyms: [[UInt]] = [[0xffca], [0xffdb], [0xffdc, 0xffdd], [0x20ac], [0x78, 0x58], [0x31, 0x21], []]

    /// A third party's change of the keyboard map: `xmodmap` on a borrowed keycode, on the one the borrower
    /// picks next, or on a layout key; or `setxkbmap` to another layout.
    mutating func thirdParty() -> BridgeInput {
        let late = chance(30)
        if chance(25) { return .setxkbmap(chance(50) ? "us" : "fr", late: late) }
        let target: XmodmapTarget
        switch int(0...9) {
        case 0...3: target = .borrowed(int(0...3))
        case 4...6: target = .nextEmpty
        default: target = .code([10, 11, 21, 26, 50, 59, 60].randomElement(using: &rng)!)
        }
        return .xmodmap(target, Self.userKeysyms.randomElement(using: &rng)!, late: late)
    }

    /// Typing and keys across third-party changes: characters no layout key makes (borrowed), some only fr or
    /// only us makes, `key 1`, `key period`, `ctrl+plus`, € by AltGr, with `xmodmap` and `setxkbmap` between,
    /// and the page going (the borrowed keycodes given back) or staying.
    mutating func keymapScenario() -> [BridgeInput] {
        let texts = ["€", "😀", "漢", "é", "ü", "1", "&", ";", ".", "a", "Z", "ß", "👍🏽", "x", "!"]
        let chords: [[UInt32]] = [[0x31], [0x2e], [0xffe3, 0x2b], [0x20ac], [0x26], [0xffe1, 0x31], [0xe9], [0x7a], [0xffca]]
        var out: [BridgeInput] = []
        for _ in 0..<int(3...14) {
            switch int(0...9) {
            case 0...2:
                var t = ""
                for _ in 0..<int(1...4) { t += texts.randomElement(using: &rng)! }
                out.append(.command(.edit(backspaces: chance(20) ? 1 : 0, text: t), source: 1))
            case 3, 4:
                var c = KeyChord()
                for k in chords.randomElement(using: &rng)! { c.append(KeySym(rawValue: k)) }
                out.append(.command(.key(c), source: 1))
            case 5...7: out.append(thirdParty())
            case 8: out.append(chance(50) ? .gone(source: 1) : .advance(UInt64(int(1...50))))
            default: out.append(.command(.text(texts.randomElement(using: &rng)!), source: 1))
            }
        }
        return out
    }
}

/// The reply on a desktop that cannot type what no key makes: a `text` or `edit` the Bridge took types
/// every character the keymap makes, in order, and nothing else; when one or more it lacks, the reply is
/// `.cannotType` of one of them (and never when it lacks none).
func checkCannotType(_ input: BridgeInput, reply: BridgeReply?, actions: [OutputAction], keymap: Keymap) -> String? {
    guard case .command(let command, _) = input, reply != .busy else { return nil }
    let scalars: [Unicode.Scalar]
    switch command {
    case .text(let t): scalars = Array(t.unicodeScalars)
    case .edit(_, let t): scalars = Array(t.unicodeScalars.prefix(WebCommand.maxEditScalars))
    default: return nil
    }
    let keysyms = scalars.map(Bridge.keysym(for:))
    let lacking = keysyms.filter { !keymap.canPress($0) }
    let expected = keysyms.filter { keymap.canPress($0) }
    let typed = actions.compactMap { a -> KeySym? in if case .type(let k) = a { return k } else { return nil } }
    if typed != expected { return "typed \(typed) where the keymap makes \(expected)" }
    switch reply {
    case .cannotType(let k):
        if !lacking.contains(k) { return "replied cannotType(\(k)), which is not among what the keymap lacks: \(lacking)" }
    default:
        if !lacking.isEmpty { return "the keymap lacks \(lacking), and the reply is \(String(describing: reply)), not cannotType" }
    }
    return nil
}
