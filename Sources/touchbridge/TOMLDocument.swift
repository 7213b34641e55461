import CToml

/// A parsed TOML document (toml++ through the CToml shim): every key and array element, in document
/// order, with its line. The only file that calls the shim.
struct TOMLDocument {
    /// One value of the document.
    indirect enum Value {
        case string(String)
        case integer(Int64)
        case float(Double)
        case boolean(Bool)
        case array([Element])
        case table([Entry])
        case dateTime
    }

    /// A table's entry: its key, the key's line (1-based; 0 if toml++ gave none) and its value.
    struct Entry {
        var key: String
        var line: Int
        var value: Value
    }

    /// An array's element and its line.
    struct Element {
        var line: Int
        var value: Value
    }

    /// The parse error: toml++'s description and the line it names.
    struct ParseError: Error {
        var line: Int
        var description: String
    }

    /// The root table's entries, in toml++'s order (by key).
    let entries: [Entry]

    /// Parses `bytes` (the file's UTF-8, not NUL-terminated: a NUL in the file is toml++'s to reject).
    /// Calls `tb_toml_parse`, `tb_toml_count`, `tb_toml_item_at` and `tb_toml_free`.
    init(bytes: [UInt8]) throws(ParseError) {
        var errorLine: UInt32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let terminated = bytes + [0]  // so that even an empty file has an address
        let parsed = terminated.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { text in
                tb_toml_parse(text.baseAddress!, bytes.count, &errorLine, &message, message.count)
            }
        }
        guard let document = parsed else {
            let text = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw ParseError(line: Int(errorLine), description: String(decoding: text, as: UTF8.self))
        }
        defer { tb_toml_free(document) }
        let items = (0..<tb_toml_count(document)).map { tb_toml_item_at(document, $0) }
        var next = 0
        entries = Self.entries(of: items, depth: 0, from: &next)
    }

    /// The bytes at `pointer` as a string (NUL and invalid UTF-8 kept or repaired, never cut).
    private static func string(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer, length > 0 else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The items from `next` on at `depth`, up to the first shallower one, as one table's entries.
    private static func entries(of items: [tb_toml_item], depth: UInt32, from next: inout Int) -> [Entry] {
        var result: [Entry] = []
        while next < items.count, items[next].depth == depth {
            let item = items[next]
            next += 1
            result.append(Entry(key: string(item.key, item.key_length), line: Int(item.line),
                                value: value(of: item, items: items, from: &next)))
        }
        return result
    }

    /// The value of `item`, reading what it holds (the items after it, one level deeper) from `next` on.
    private static func value(of item: tb_toml_item, items: [tb_toml_item], from next: inout Int) -> Value {
        switch item.kind {
        case TB_TOML_STRING: return .string(string(item.string, item.string_length))
        case TB_TOML_INTEGER: return .integer(item.integer)
        case TB_TOML_FLOAT: return .float(item.floating)
        case TB_TOML_BOOLEAN: return .boolean(item.boolean)
        case TB_TOML_TABLE: return .table(entries(of: items, depth: item.depth + 1, from: &next))
        case TB_TOML_ARRAY:
            var elements: [Element] = []
            while next < items.count, items[next].depth == item.depth + 1 {
                let element = items[next]
                next += 1
                elements.append(Element(line: Int(element.line), value: value(of: element, items: items, from: &next)))
            }
            return .array(elements)
        default: return .dateTime
        }
    }
}
