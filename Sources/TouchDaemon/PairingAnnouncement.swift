import Logging
import TouchWeb

#if canImport(Glibc)
import Glibc
#endif

/// The web page's pairing as the daemon tells it: the secret kept in the state directory, and the line
/// that says where the page listens (with the QR code of its address for a person at a terminal).
enum PairingAnnouncement {
    /// The pairing secret kept in `directory` (`--new-secret`: a new one), said when one was made.
    static func secret(directory: String, rotate: Bool, logger: Logger) throws -> PairingSecret {
        let (secret, created, note) = try PairingSecret.load(directory: directory, rotate: rotate)
        if created { logger.notice("made a new pairing secret in \(directory)/pairing-secret") }
        if let note { logger.warning("\(note)") }
        return secret
    }

    /// Says that the page listens on `port`. The secret stays out of the log (a service's stdout is its
    /// journal): `touchbridge pair` prints the page's address with it; a terminal (a person watching)
    /// also gets the QR code.
    static func listening(_ s: DaemonSettings, port: Int, secret: PairingSecret) {
        writeLine("listening http \(s.bind):\(port) (phone: 'touchbridge pair' prints the page's address and QR code)")
        let urls = PhoneAddresses.pageURLs(scheme: s.tlsCertificate == nil ? "http" : "https", bind: s.bind,
                                           port: port, allowList: s.allowList, secret: secret)
        if isatty(1) == 1, let first = urls.first, let lines = QRCode.terminalLines(first) {
            writeLine("scan with the phone's camera to open \(first):")
            for line in lines { writeLine(line) }
        }
    }
}
