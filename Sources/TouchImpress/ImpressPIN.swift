// The PIN touchbridge pairs with LibreOffice Impress's remote server by.

/// Four decimal digits, as Impress's "Impress Remote" dialog asks for them and as a profile's
/// `AuthorisedRemotes` entry keeps them. Leading zeros are kept ("0042").
public struct ImpressPIN: Hashable, Sendable, CustomStringConvertible {
    /// The four digits, as text.
    public let digits: String

    /// The PIN in `text`, or nil when it is not exactly four ASCII digits.
    public init?(parsing text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 4, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        digits = String(decoding: utf8, as: UTF8.self)
    }

    /// The PIN of `value` (0...9999), zero-padded.
    public init(value: UInt16) {
        let v = Int(value % 10_000)
        let text = String(v)
        digits = String(repeating: "0", count: 4 - text.count) + text
    }

    public var description: String { digits }
}
