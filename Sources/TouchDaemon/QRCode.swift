import CQRencode

/// A QR code of a URL for the terminal, drawn with half blocks (two modules per character row), dark
/// on light with the quiet zone, by libqrencode.
public enum QRCode {
    public static func terminalLines(_ text: String) -> [String]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_L, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let quiet = 2
        let size = width + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (cx, cy) = (x - quiet, y - quiet)
            guard cx >= 0, cy >= 0, cx < width, cy < width else { return false }
            return code.pointee.data[cy * width + cx] & 1 != 0
        }
        var lines: [String] = []
        var y = 0
        while y < size {
            var line = ""
            for x in 0..<size {
                // Light modules are printed as full blocks (light on a dark terminal), dark ones as spaces.
                switch (dark(x, y), dark(x, y + 1)) {
                case (false, false): line += "█"
                case (false, true): line += "▀"
                case (true, false): line += "▄"
                case (true, true): line += " "
                }
            }
            lines.append(line)
            y += 2
        }
        return lines
    }
}
