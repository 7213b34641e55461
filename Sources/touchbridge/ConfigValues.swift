import ArgumentParser

/// Settings read from the config file: top-level keys named like the long options (`udp-port = 8080`,
/// `natural-scroll = true`), and the `[swipe]` table (`3-left = "alt+Right"`). Each accessor returns nil
/// when the key is absent and throws, naming the line and the key, when its value has the wrong type.
struct ConfigValues: Sendable {
    enum Value: Sendable, Equatable {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
        case table([String: String])
    }

    /// Where each key was read from, for errors: `path:line`.
    var values: [String: (value: Value, line: Int)] = [:]
    var path: String = ""

    init() {}

    init(values: [String: (value: Value, line: Int)], path: String) {
        self.values = values
        self.path = path
    }

    struct BadValue: Error, CustomStringConvertible {
        var description: String
    }

    private func bad(_ key: String, _ expected: String) -> BadValue {
        let line = values[key]?.line ?? 0
        return BadValue(description: "\(path):\(line): key \"\(key)\": expected \(expected)")
    }

    func string(_ key: String) throws -> String? {
        guard let (v, _) = values[key] else { return nil }
        if case .string(let s) = v { return s }
        throw bad(key, "a string")
    }

    func int(_ key: String) throws -> Int? {
        guard let (v, _) = values[key] else { return nil }
        if case .int(let n) = v { return n }
        throw bad(key, "an integer")
    }

    func double(_ key: String) throws -> Double? {
        guard let (v, _) = values[key] else { return nil }
        switch v {
        case .double(let d): return d
        case .int(let n): return Double(n)
        default: throw bad(key, "a number")
        }
    }

    func bool(_ key: String) throws -> Bool? {
        guard let (v, _) = values[key] else { return nil }
        if case .bool(let b) = v { return b }
        throw bad(key, "true or false")
    }

    func strings(_ key: String) throws -> [String]? {
        guard let (v, _) = values[key] else { return nil }
        if case .string(let s) = v { return [s] }
        throw bad(key, "a string")
    }

    func table(_ key: String) throws -> [(String, String)] {
        guard let (v, _) = values[key] else { return [] }
        if case .table(let t) = v { return t.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
        throw bad(key, "a table of strings")
    }

    func enumValue<E: RawRepresentable & CaseIterable>(_ key: String) throws -> E? where E.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let e = E(rawValue: s) else {
            throw bad(key, E.allCases.map { $0.rawValue }.joined(separator: ", "))
        }
        return e
    }
}
