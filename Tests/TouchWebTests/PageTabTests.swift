// A page's tab (`t=` in its WebSocket's address, web/connection.js): a new connection of the same tab
// closes the old one the daemon still holds (the phone lost Wi-Fi and came back without closing it), so
// that the page gets its place back at once; a tab that is not one is ignored, with a counted line.
// Time is the embedded loop's: nothing here sleeps.
import Logging
import NIOCore
import NIOEmbedded
import Testing
import TouchCore
@testable import TouchWeb

@Suite struct PageTabTests {
    /// A connection from `ip` admitted and made a page of `tab`; nil when refused.
    static func page(_ ip: String, port: Int, tab: Substring?, table: ConnectionTable, loop: EmbeddedEventLoop) throws -> EmbeddedChannel? {
        let channel = try ConnectionTableTests.connected(ip, port: port)
        let parts = ip.split(separator: ".").compactMap { UInt32($0) }
        let source = SourceAddress(ipv4: parts.reduce(0) { $0 << 8 | $1 }, port: UInt16(port))
        guard case .admit = table.admit(channel, from: source, now: loop.now),
              table.admitPage(channel, tab: tab, now: loop.now) != nil else { return nil }
        return channel
    }

    @Test func aTabIsEightToSixtyFourLettersDigitsDashesOrUnderscores() {
        for good in ["abcdefgh", "0123456789abcdef01234567", "A-b_C-d_", String(repeating: "z", count: 64)] {
            #expect(ConnectionTable.isTab(Substring(good)), "\(good)")
        }
        for bad in ["", "abcdefg", String(repeating: "z", count: 65), "abcd efgh", "abcd%20efgh", "abcdefgh/", "abcdéfgh",
                    "abcd@efg", "abcd[efg", "abcd`efg", "abcd{efg", "abcd.efg"] {
            #expect(!ConnectionTable.isTab(Substring(bad)), "\(bad)")
        }
    }

    /// The same tab's new connection closes its old one, whatever its address (a phone's address may
    /// change with its network); other tabs, and pages with no tab or a broken one, stay.
    @Test func theSameTabsNewConnectionClosesItsOldOne() throws {
        let loop = EmbeddedEventLoop()
        let table = ConnectionTable(loop: loop, logger: .init(label: "test"))
        guard let old = try Self.page("127.0.0.1", port: 3000, tab: "00112233aabbccdd", table: table, loop: loop),
              let other = try Self.page("127.0.0.1", port: 3001, tab: "99887766aabbccdd", table: table, loop: loop),
              let none = try Self.page("127.0.0.1", port: 3002, tab: nil, table: table, loop: loop),
              let broken = try Self.page("127.0.0.1", port: 3003, tab: "no tab", table: table, loop: loop)
        else { Issue.record("a page refused"); return }
        #expect(table.pageCount == 4)
        loop.advanceTime(by: .seconds(1))
        guard let again = try Self.page("127.0.0.2", port: 4000, tab: "00112233aabbccdd", table: table, loop: loop) else {
            Issue.record("the tab's new connection refused"); return
        }
        #expect(!old.isActive, "the tab's old connection is still open")
        #expect(other.isActive && none.isActive && broken.isActive && again.isActive)
        #expect(table.pageCount == 4)
        // A broken tab matches nothing, not even itself; no tab matches no tab.
        guard let broken2 = try Self.page("127.0.0.3", port: 4001, tab: "no tab", table: table, loop: loop),
              let none2 = try Self.page("127.0.0.3", port: 4002, tab: nil, table: table, loop: loop) else {
            Issue.record("a page refused"); return
        }
        #expect(broken.isActive && broken2.isActive && none.isActive && none2.isActive)
        // The address's room: the old connection's place was given back (four pages of 127.0.0.1 again).
        #expect(try Self.page("127.0.0.1", port: 3004, tab: "0123456789", table: table, loop: loop) != nil)
    }

    /// Every sequence of 5 steps among: a page from one of two addresses with tab A, tab B, a broken tab
    /// or none; the oldest open page closing; 6 s passing (pages go quiet). After each step: at most one
    /// open page of each tab, the page just let in is open, at most 4 pages an address, and the table
    /// counts exactly the open pages. (7^5 sequences.)
    @Test func everySequenceKeepsOnePageATab() throws {
        enum Step: String, CaseIterable { case a1, a2, b1, none1, broken2, closeOldest, quiet }
        let steps = Step.allCases
        var failures: [String] = []
        for n in 0..<(steps.count * steps.count * steps.count * steps.count * steps.count) {
            var code = n
            let sequence = (0..<5).map { _ -> Step in defer { code /= steps.count }; return steps[code % steps.count] }
            let loop = EmbeddedEventLoop()
            let table = ConnectionTable(loop: loop, logger: .init(label: "test"))
            var open: [(channel: EmbeddedChannel, tab: Substring?, ip: String)] = []
            var port = 1000
            for step in sequence {
                var admitted: EmbeddedChannel?
                func page(_ ip: String, _ tab: Substring?) throws {
                    port += 1
                    admitted = try Self.page(ip, port: port, tab: tab, table: table, loop: loop)
                    if let admitted { open.append((admitted, tab, ip)) }
                }
                switch step {
                case .a1: try page("127.0.0.1", "tab-aaaaaaaa")
                case .a2: try page("127.0.0.2", "tab-aaaaaaaa")
                case .b1: try page("127.0.0.1", "tab-bbbbbbbb")
                case .none1: try page("127.0.0.1", nil)
                case .broken2: try page("127.0.0.2", "tab aaaaaaaa")
                case .closeOldest:
                    if let oldest = open.first(where: { $0.channel.isActive }) {
                        _ = oldest.channel.close()
                        table.release(oldest.channel)
                    }
                case .quiet: loop.advanceTime(by: .seconds(6))
                }
                // A closed channel gives its place back, as the server's close does (AdmittedChannel).
                for page in open where !page.channel.isActive { table.release(page.channel) }
                let live = open.filter { $0.channel.isActive }
                var what: [String] = []
                for tab: Substring in ["tab-aaaaaaaa", "tab-bbbbbbbb"] where live.count(where: { $0.tab == tab }) > 1 { what.append("two open pages of \(tab)") }
                if let admitted, !admitted.isActive { what.append("the page let in is closed") }
                for ip in ["127.0.0.1", "127.0.0.2"] where live.count(where: { $0.ip == ip }) > 4 { what.append("over 4 pages of \(ip)") }
                if table.pageCount != live.count { what.append("the table counts \(table.pageCount) pages, \(live.count) open") }
                if !what.isEmpty { failures.append("\(sequence.map(\.rawValue)), after \(step.rawValue): \(what.joined(separator: "; "))") }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) sequences, the first: \(failures.prefix(3))")
    }
}
