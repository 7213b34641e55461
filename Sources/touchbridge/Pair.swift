// `touchbridge pair`: the web touchpad's address with its pairing secret, and its QR code, on demand.
// The service's own log never carries the secret; a person asks for it here.
import ArgumentParser
import TouchCore
import TouchDaemon
import TouchWeb

struct Pair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Print the web touchpad's address with its pairing secret, and its QR code to scan with the phone.",
        discussion: """
            Reads the secret from $XDG_STATE_HOME/touchbridge/pairing-secret (making one if there is none yet; \
            a file there that is not a secret, or not your own (owned by you, not a symbolic link, in a directory \
            only you can write), is never replaced: pair says what is wrong and what to do, and exits 65; a mode \
            other than 0600 is repaired and said) \
            and the port, address and scheme from the same settings serve uses: the config file, then the \
            options given (as to serve, e.g. --http-port, --bind, --tls-cert). Then the PIN LibreOffice Impress \
            pairs by: impress-pin or --impress-pin, else the one kept in $XDG_STATE_HOME/touchbridge/impress-pin \
            (made if there is none yet).
            """
    )

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Options of serve, as they would be given to it.", valueName: "serve-options"))
    var serveOptions: [String] = []

    func run() throws {
        let serve = try ServeSettings.read(try Serve.parse(serveOptions), command: "pair").settings
        guard serve.httpPort != 0 else {
            throw ValidationError("the web touchpad is off (--http-port 0): there is no page to pair with")
        }
        let secret: PairingSecret
        do {
            let loaded = try PairingSecret.load(directory: PairingSecret.stateDirectory(), rotate: false)
            secret = loaded.secret
            if let note = loaded.note { writeError("touchbridge pair: \(note)") }
        } catch let error as SecretFileError {
            // Not replaced: a running daemon still holds the old secret, so a new one would pair nothing.
            writeError("touchbridge pair: \(error)")
            throw ExitCode(65)
        }
        let urls = PhoneAddresses.pageURLs(scheme: serve.tlsCert == nil ? "http" : "https", bind: serve.bind,
                                  port: serve.httpPort, allowList: serve.allowList, secret: secret)
        for url in urls { print(url) }
        if let first = urls.first, let lines = QRCode.terminalLines(first) {
            print("scan with the phone's camera to open \(first):")
            for line in lines { print(line) }
        }
        // The PIN LibreOffice Impress asks for the first time (Slide Show › Impress Remote).
        var pin = serve.impressPin
        if pin == nil {
            do {
                pin = try ImpressPINFile.load(directory: PairingSecret.stateDirectory()).pin
            } catch {
                writeError("touchbridge pair: \(error)")
                throw ExitCode(65)
            }
        }
        print("LibreOffice Impress PIN: \(pin!) (Impress asks for it once, in Slide Show › Impress Remote)")
    }
}
