// The hot path allocates nothing once warm: proven by counting this thread's mallocs.
import AllocationCounter
import Testing
import TouchCore

/// Runs `body` and returns how many heap allocations the current thread made in it.
func allocations(_ body: () -> Void) -> UInt64 {
    let before = allocation_counter_thread_count()
    body()
    return allocation_counter_thread_count() - before
}

@Suite struct AllocationTests {
    @Test func counterSeesAnAllocation() {
        var kept: [Int] = []
        let n = allocations { kept = Array(repeating: 1, count: 100) }
        #expect(n >= 1)
        #expect(kept.count == 100)
    }

    @Test func bridgeCoreHotPathAllocatesNothingOnceWarm() {
        var core = TouchPipeline(configuration: .init(screen: ScreenMapping(width: 1920, height: 1080)))
        var actions: [OutputAction] = []
        actions.reserveCapacity(64)
        var packet = TouchPacket()

        // One decode-and-handle round, the way the shell does it: the packet and buffer are reused.
        func round(_ i: Int) {
            packet.reset()
            let x = UInt16(i % 4000), y = UInt16((i * 7) % 4000)
            switch i % 50 {
            case 49: packet.events.append(TouchEvent(slot: 0, update: .ended))
            case 48: packet.events.append(TouchEvent(slot: 1, update: .cancelled))
            default:
                packet.events.append(TouchEvent(slot: 0, update: .position(DevicePoint(rawX: x, rawY: y))))
                packet.events.append(TouchEvent(slot: 1, update: .position(DevicePoint(rawX: y, rawY: x))))
            }
            packet.hasTouches = true
            var state = TouchState()
            if i % 3 == 0 { state[2] = .down(DevicePoint(rawX: x, rawY: x)) }
            packet.state = state
            packet.orientation = .landscapeLeft
            let now = Instant.milliseconds(UInt64(i) * 16)
            actions.removeAll(keepingCapacity: true)
            core.handle(packet, at: now, into: &actions)
            if let deadline = core.nextDeadline, i % 10 == 0 {
                core.handleTimer(at: deadline, into: &actions)
            }
            if i % 97 == 0 { core.releaseAll(into: &actions) }
        }

        for i in 0..<200 { round(i) }  // warm up
        let n = allocations { for i in 200..<5_000 { round(i) } }
        #expect(n == 0)
    }

    /// The pen's path: pen mode (tablet frames and the pointer) and presenter mode (pressure strokes,
    /// the eraser), timers and releases included.
    @Test(arguments: [TouchMode.pen, .presenter], [false, true])
    func penHotPathAllocatesNothingOnceWarm(mode: TouchMode, tablet: Bool) {
        var c = TouchPipeline.Configuration(screen: ScreenMapping(width: 1920, height: 1080), mode: mode)
        c.penTablet = tablet
        var core = TouchPipeline(configuration: c)
        var actions: [OutputAction] = []
        actions.reserveCapacity(64)

        func round(_ i: Int) {
            let now = Instant.milliseconds(UInt64(i) * 16)
            actions.removeAll(keepingCapacity: true)
            let report: PenReport = i % 40 == 39 ? .away : .near(PenSample(
                x: Double(i % 100) / 100, y: Double((i * 7) % 100) / 100, pressure: Double(i % 10) / 10,
                tiltX: Double(i % 90), tiltY: -Double(i % 45), twist: 0, touching: i % 40 > 5,
                barrel: i % 13 == 0, eraser: i % 200 > 170))
            core.pen(report, at: now, into: &actions)
            if let deadline = core.nextDeadline, i % 10 == 0 { core.handleTimer(at: deadline, into: &actions) }
            if i % 97 == 0 { core.releaseAll(into: &actions) }
        }

        for i in 0..<400 { round(i) }  // warm up
        let n = allocations { for i in 400..<5_000 { round(i) } }
        #expect(n == 0)
    }

    @Test func touchpadHotPathAllocatesNothingOnceWarm() {
        var settings = TouchpadSettings()
        settings.dragLock = true
        var core = TouchPipeline(configuration: .init(
            screen: ScreenMapping(width: 1920, height: 1080), mode: .touchpad, touchpad: settings))
        core.setTracing(true)
        var actions: [OutputAction] = []
        actions.reserveCapacity(256)
        var packet = TouchPacket()
        var now: UInt64 = 0
        let fingerCounts = [1, 1, 2, 2, 3, 4, 1, 2]
        var sawScroll = false, sawKey = false, sawClick = false, sawMove = false

        // Cycles through every path: one-finger motion, taps, double taps, drags, two-finger scroll
        // with a kinetic flick, pinch, three- and four-finger swipes, cancels, timers and releaseAll.
        func round(_ i: Int) {
            let phase = i % 40
            let fingers = fingerCounts[(i / 40) % 8]
            packet.reset()
            now += phase < 3 ? 60 : 16
            let spread = (i / 40) % 8 == 3 ? UInt16(phase * 30) : 0
            for f in 0..<fingers {
                let x = UInt16(1000 + f * 400) + UInt16(phase * 25) + spread * UInt16(f)
                let y = UInt16(1500 + phase * ((i / 40) % 2 == 0 ? 20 : 3))
                switch phase {
                case 38: packet.events.append(TouchEvent(slot: UInt8(f), update: i % 80 < 40 ? .ended : .cancelled))
                case 39: break
                case 2 where (i / 40) % 3 == 0: packet.events.append(TouchEvent(slot: UInt8(f), update: .ended))
                default: packet.events.append(TouchEvent(slot: UInt8(f), update: .position(DevicePoint(rawX: x, rawY: y))))
                }
            }
            packet.hasTouches = true
            packet.orientation = i % 200 < 100 ? .portrait : .landscapeRight
            actions.removeAll(keepingCapacity: true)
            core.handle(packet, at: .milliseconds(now), into: &actions)
            if let d = core.nextDeadline, d <= .milliseconds(now + 20) {
                core.handleTimer(at: d, into: &actions)
            }
            if i % 397 == 0 { core.releaseAll(into: &actions) }
            core.clearTrace()
            for a in actions.indices {
                switch actions[a] {
                case .button(let b, _): if b.rawValue >= 4 { sawScroll = true } else { sawClick = true }
                case .key: sawKey = true
                case .moveBy: sawMove = true
                default: break
                }
            }
        }

        for i in 0..<2_000 { round(i) }  // warm up
        let n = allocations { for i in 2_000..<12_000 { round(i) } }
        #expect(n == 0)
        // The rounds did reach every kind of output.
        #expect(sawScroll && sawKey && sawClick && sawMove)
    }

    /// Multi-pointer output, contain fit and orientation changes (the mapping is recomputed on each
    /// change of orientation) allocate nothing once warm either.
    @Test func multitouchWithOrientationChangesAllocatesNothingOnceWarm() {
        var core = TouchPipeline(configuration: .init(
            mapping: AbsoluteMapping(target: PixelRect(x: 960, y: 120, width: 1920, height: 1080), fit: .contain),
            multitouch: true))
        var actions: [OutputAction] = []
        actions.reserveCapacity(64)
        var packet = TouchPacket()
        let orientations: [DeviceOrientation] = [.portrait, .landscapeLeft, .faceUp, .landscapeRight, .portraitUpsideDown]
        var fingerActions = 0

        func round(_ i: Int) {
            packet.reset()
            for s in 0..<5 {
                let x = UInt16((i * (s + 3)) % 4095), y = UInt16((i * 7 + s * 500) % 4095)
                let update: SlotUpdate = (i + s) % 40 == 39 ? .ended : .position(DevicePoint(rawX: x, rawY: y))
                packet.events.append(TouchEvent(slot: UInt8(s), update: update))
            }
            packet.hasTouches = true
            packet.orientation = orientations[(i / 25) % orientations.count]
            actions.removeAll(keepingCapacity: true)
            core.handle(packet, at: .milliseconds(UInt64(i) * 16), into: &actions)
            for j in actions.indices {
                if case .extraPointerMove = actions[j] { fingerActions += 1 }
            }
            if i % 97 == 0 { core.releaseAll(into: &actions) }
        }

        for i in 0..<200 { round(i) }  // warm up
        let n = allocations { for i in 200..<5_000 { round(i) } }
        #expect(n == 0)
        #expect(fingerActions > 1000)
    }

    @Test func admissionAndAllowListAllocateNothing() throws {
        let list = AllowList.defaultPrivate
        var session = SenderSession()
        var log = DropLog<4>()
        let phone = Sender(SourceAddress(ipv4: 0xc0a8_0114, port: 50000), via: .poseAI)
        let bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 30]
        var allowed = 0
        func round(_ i: Int) {
            let other = bytes.withUnsafeBytes { SourceAddress(bytes: $0, port: UInt16(i % 20))! }
            if list.allows(phone.address) && list.allows(other) { allowed += 1 }
            _ = session.admit(phone, at: .milliseconds(UInt64(i)))
            session.renew(at: .milliseconds(UInt64(i)))
            _ = session.admit(Sender(other, via: i % 2 == 0 ? .web : .tuio), at: .milliseconds(UInt64(i)))
            _ = log.record(reasonIndex: i % 4, at: .milliseconds(UInt64(i)))
        }
        for i in 0..<100 { round(i) }  // warm up (the runtime fills its metadata caches once)
        let n = allocations { for i in 100..<10_000 { round(i) } }
        #expect(n == 0)
        #expect(allowed == 10_000)
    }
}
