import Testing
import TouchCore

@Suite struct ContactTrackerTests {
    @Test func firstPositionBeginsContact() {
        var t = ContactTracker()
        #expect(t.feed(packet(at(0, 100, 200))) == [.began(slot: 0, at: pt(100, 200))])
        #expect(t.hasContacts)
        #expect(t.contactCount == 1)
        #expect(t.point(ofSlot: 0) == pt(100, 200))
        #expect(t.point(ofSlot: 1) == nil)
        #expect(t.point(ofSlot: 200) == nil)
    }

    @Test func positionOfActiveSlotIsMove() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 100, 200)))
        #expect(t.feed(packet(at(0, 110, 220))) == [.moved(slot: 0, to: pt(110, 220))])
    }

    @Test func moveToSamePointIsSuppressed() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 100, 200)))
        #expect(t.feed(packet(at(0, 100, 200))) == [])
    }

    @Test func endedEndsActiveContact() {
        var t = ContactTracker()
        _ = t.feed(packet(at(3, 1, 2)))
        #expect(t.feed(packet(ended(3))) == [.ended(slot: 3)])
        #expect(!t.hasContacts)
    }

    @Test func cancelledEventCancelsActiveContact() {
        var t = ContactTracker()
        _ = t.feed(packet(at(1, 1, 2)))
        #expect(t.feed(packet(cancelled(1))) == [.cancelled(slot: 1)])
        #expect(!t.hasContacts)
    }

    @Test func endedOrCancelledOnFreeSlotDoesNothing() {
        var t = ContactTracker()
        #expect(t.feed(packet(ended(0), cancelled(4))) == [])
        _ = t.feed(packet(at(0, 5, 5)))
        _ = t.feed(packet(ended(0)))
        #expect(t.feed(packet(ended(0))) == [])
    }

    @Test func severalEventsForOneSlotInOnePacket() {
        var t = ContactTracker()
        let changes = t.feed(packet(at(0, 10, 10), at(0, 20, 20), at(0, 30, 30), ended(0), at(0, 40, 40)))
        #expect(changes == [
            .began(slot: 0, at: pt(10, 10)),
            .moved(slot: 0, to: pt(20, 20)),
            .moved(slot: 0, to: pt(30, 30)),
            .ended(slot: 0),
            .began(slot: 0, at: pt(40, 40)),
        ])
        #expect(t.point(ofSlot: 0) == pt(40, 40))
    }

    @Test func tapInOnePacketBeginsAndEnds() {
        var t = ContactTracker()
        #expect(t.feed(packet(at(0, 10, 10), ended(0), state: state())) == [.began(slot: 0, at: pt(10, 10)), .ended(slot: 0)])
        #expect(!t.hasContacts)
    }

    @Test func eventsForSeveralSlotsKeepTheirOrder() {
        var t = ContactTracker()
        let changes = t.feed(packet(at(0, 1, 1), at(1, 2, 2), at(0, 3, 3), ended(1)))
        #expect(changes == [.began(slot: 0, at: pt(1, 1)), .began(slot: 1, at: pt(2, 2)), .moved(slot: 0, to: pt(3, 3)), .ended(slot: 1)])
    }

    @Test func changesAreAppendedToTheCallersBuffer() {
        var t = ContactTracker()
        var out: [ContactChange] = [.ended(slot: 9)]
        t.handle(packet(at(0, 1, 1)), at: ms(0), into: &out)
        #expect(out == [.ended(slot: 9), .began(slot: 0, at: pt(1, 1))])
    }

    @Test func slotOutOfRangeIsIgnored() {
        var t = ContactTracker()
        #expect(t.feed(packet(at(10, 1, 1), at(255, 1, 1), ended(12))) == [])
        #expect(!t.hasContacts)
    }

    // MARK: TouchState reconciliation

    @Test func lostEndedIsReleasedByTouchState() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10), state: state([0: .down(pt(10, 10))])))
        // The packet with "0 ended" was lost; the next one only has the state.
        #expect(t.feed(packet(state: state())) == [.ended(slot: 0)])
        #expect(!t.hasContacts)
    }

    @Test func lostEndedIsReleasedByStateOfPacketWithOtherEvents() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10)))
        #expect(t.feed(packet(at(1, 50, 50), state: state([1: .down(pt(50, 50))])))
            == [.began(slot: 1, at: pt(50, 50)), .ended(slot: 0)])
    }

    @Test func stateCancelledCancelsActiveContact() {
        var t = ContactTracker()
        _ = t.feed(packet(at(2, 10, 10)))
        #expect(t.feed(packet(state: state([2: .cancelled]))) == [.cancelled(slot: 2)])
        #expect(t.feed(packet(state: state([2: .cancelled]))) == [])
    }

    @Test func lostFirstEventIsBegunFromTouchState() {
        var t = ContactTracker()
        #expect(t.feed(packet(state: state([0: .down(pt(7, 8))]))) == [.began(slot: 0, at: pt(7, 8))])
        #expect(t.point(ofSlot: 0) == pt(7, 8))
    }

    @Test func lostMovesAreRecoveredFromTouchState() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10)))
        #expect(t.feed(packet(state: state([0: .down(pt(90, 90))]))) == [.moved(slot: 0, to: pt(90, 90))])
    }

    @Test func stateAgreeingWithTrackerChangesNothing() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10), at(4, 20, 20)))
        #expect(t.feed(packet(state: state([0: .down(pt(10, 10)), 4: .down(pt(20, 20))]))) == [])
        #expect(t.contactCount == 2)
    }

    @Test func staleStateDoesNotResurrectEndedFinger() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10)))
        // The events end slot 0; the snapshot was taken before that and still shows it down.
        #expect(t.feed(packet(at(0, 12, 12), ended(0), state: state([0: .down(pt(12, 12))])))
            == [.moved(slot: 0, to: pt(12, 12)), .ended(slot: 0)])
        #expect(!t.hasContacts)
        // Next packet: a fresh state agrees.
        #expect(t.feed(packet(state: state())) == [])
    }

    @Test func staleStateDoesNotResurrectCancelledFinger() {
        var t = ContactTracker()
        #expect(t.feed(packet(at(0, 10, 10), cancelled(0), state: state([0: .down(pt(10, 10))])))
            == [.began(slot: 0, at: pt(10, 10)), .cancelled(slot: 0)])
        #expect(!t.hasContacts)
    }

    @Test func staleStateDoesNotEndFingerBegunInSamePacket() {
        var t = ContactTracker()
        #expect(t.feed(packet(at(0, 10, 10), state: state())) == [.began(slot: 0, at: pt(10, 10))])
        #expect(t.hasContacts)
    }

    @Test func staleStateDoesNotMoveFingerBackInSamePacket() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10)))
        #expect(t.feed(packet(at(0, 20, 20), state: state([0: .down(pt(10, 10))]))) == [.moved(slot: 0, to: pt(20, 20))])
        #expect(t.point(ofSlot: 0) == pt(20, 20))
    }

    @Test func reusedSlotAfterEndIsBegunAgainDespiteStaleState() {
        var t = ContactTracker()
        _ = t.feed(packet(at(0, 10, 10)))
        // Lift and a new finger in slot 0 within one packet; the stale state says free.
        #expect(t.feed(packet(ended(0), at(0, 50, 50), state: state()))
            == [.ended(slot: 0), .began(slot: 0, at: pt(50, 50))])
        #expect(t.point(ofSlot: 0) == pt(50, 50))
    }

    @Test func cancelAllCancelsEveryActiveSlotLowestFirst() {
        var t = ContactTracker()
        _ = t.feed(packet(at(5, 1, 1), at(0, 2, 2), at(9, 3, 3)))
        var out: [ContactChange] = []
        t.cancelAll(into: &out)
        #expect(out == [.cancelled(slot: 0), .cancelled(slot: 5), .cancelled(slot: 9)])
        #expect(!t.hasContacts)
        out.removeAll()
        t.cancelAll(into: &out)
        #expect(out == [])
    }
}
