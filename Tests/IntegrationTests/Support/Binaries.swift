// Where the binaries under test are: an environment variable first, else the newest of the
// package's build directories.
import Foundation
import Glibc
import Synchronization

enum Binaries {
    /// The package root: this file is <root>/Tests/IntegrationTests/Support/Binaries.swift.
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The scratch path the integration rig builds with (`swift build --scratch-path .build-it`).
    static let scratchPath = ".build-it"

    static func touchbridge() throws -> String { try announce(locate("touchbridge", env: "TOUCHBRIDGE_BIN")) }
    static func xobserve() throws -> String { try announce(locate("xobserve", env: "XOBSERVE_BIN")) }

    private static let announced = Mutex<Set<String>>([])

    /// Prints each binary the rig uses, once per test run, so a report says what was tested.
    private static func announce(_ path: String) -> String {
        let isNew = announced.withLock { $0.insert(path).inserted }
        if isNew { print("rig: using \(path)") }
        return path
    }

    /// `$env` if set (it must then exist), else the existing candidate with the newest mtime among
    /// `<root>/.build/debug/<name>`, `<root>/.build-it/debug/<name>` and the directory of the running
    /// test bundle (which is one of those under `swift test`, or another `--scratch-path`).
    static func locate(_ name: String, env: String) throws -> String {
        if let path = ProcessInfo.processInfo.environment[env], !path.isEmpty {
            guard access(path, X_OK) == 0 else {
                throw RigError("\(env)=\(path) is set but is not an executable file")
            }
            return path
        }
        var candidates = [
            "\(packageRoot)/.build/debug/\(name)",
            "\(packageRoot)/\(scratchPath)/debug/\(name)",
        ]
        if let testBinary = CommandLine.arguments.first, testBinary.contains("/") {
            var dir = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
            // A bundle directory (…/x.xctest/Contents/MacOS) or the test executable itself.
            while dir.path.contains(".xctest") { dir.deleteLastPathComponent() }
            candidates.append(dir.appendingPathComponent(name).path)
        }
        var best: (path: String, mtime: timespec)?
        for path in candidates {
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(path, X_OK) == 0 else { continue }
            let m = st.st_mtim
            if let b = best, (b.mtime.tv_sec, b.mtime.tv_nsec) >= (m.tv_sec, m.tv_nsec) { continue }
            best = (path, m)
        }
        guard let best else {
            throw RigError("""
                no \(name) binary: set \(env), or build it (`swift build --scratch-path \(scratchPath)` \
                in \(packageRoot)); looked at:
                \(candidates.map { "  \($0)" }.joined(separator: "\n"))
                """)
        }
        return best.path
    }
}
