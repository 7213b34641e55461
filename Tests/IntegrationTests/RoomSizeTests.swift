// Rooms with one job: no Swift file in Sources/ grows past 450 lines. A file that would is split by what
// its parts do (an extension per job, in a file named for the job), not by line count.
import Foundation
import Testing

@Suite struct RoomSizeTests {
    /// The most lines a Swift file in Sources/ may have.
    static let maxLines = 450

    @Test func noSwiftFileInSourcesIsOver450Lines() throws {
        let root = Binaries.packageRoot + "/Sources"
        let walker = try #require(FileManager.default.enumerator(atPath: root), "cannot list \(root)")
        var checked = 0
        var over: [String] = []
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let count = text.hasSuffix("\n") ? lines.count - 1 : lines.count
            checked += 1
            if count > Self.maxLines { over.append("Sources/\(path): \(count) lines") }
        }
        #expect(checked > 100, "only \(checked) Swift files found under \(root)")
        #expect(over.isEmpty, "Swift files in Sources over \(Self.maxLines) lines (split them by job): \(over.sorted())")
    }
}
