// libFuzzer target: LibreOffice Impress's remote protocol as touchbridge's client reads it
// (`ImpressConnection`). Built by scripts/fuzz.sh with `swiftc -sanitize=fuzzer,address`; not part of the
// SwiftPM package.
//
// The input is what a server sends; its first byte picks how it is cut into reads (whole, or in pieces
// of 1–255 bytes) and whether the client is paired first. Checks: never traps; the cut changes nothing
// (the same outputs whole or in pieces); after `notImpress` nothing more comes out; a preview is a PNG of at
// most 4 MiB; notes and titles are plain text (no control character but "\n");
// slide numbers within the show; the message kept stays within 8 MiB; a command goes only when paired.
import TouchCore
import TouchImpress

private let pin = ImpressPIN(parsing: "1234")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImpress(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size > 0, let data else { return 0 }
    let control = data[0]
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let prefix: [UInt8] = control & 0x80 != 0 ? Array("LO_SERVER_SERVER_PAIRED\n\n".utf8) : []
    let stream = prefix + body
    let now = Instant(nanoseconds: 1_000_000_000)

    var whole = ImpressConnection(pin: pin)
    var wholeOut: [ImpressConnection.Output] = []
    whole.receive(stream, at: now, into: &wholeOut)

    let piece = Int(control & 0x7F) + 1
    var cut = ImpressConnection(pin: pin)
    var cutOut: [ImpressConnection.Output] = []
    var i = 0
    while i < stream.count {
        let end = min(stream.count, i + piece)
        cut.receive(stream[i..<end], at: now, into: &cutOut)
        i = end
    }
    precondition(cutOut == wholeOut, "the cut of the reads changed the outputs")
    precondition(cut.state == whole.state, "the cut of the reads changed the state")

    var count: Int? = nil
    for (k, output) in wholeOut.enumerated() {
        switch output {
        case .notImpress:
            precondition(k == wholeOut.count - 1, "outputs after notImpress")
        case .refused:
            break
        case .write:
            preconditionFailure("held commands written when none was asked for")
        case .event(let event):
            switch event {
            case .slideshowStarted(let c, let current):
                precondition(c >= 1 && c <= ImpressConnection.maxSlides && current >= 0 && current < c, "a show out of range")
                count = c
            case .slideshowFinished:
                count = nil
            case .slideUpdated(let n):
                precondition(n >= 0 && n < (count ?? ImpressConnection.maxSlides), "a slide out of the show")
            case .slidePreview(let n, let png):
                precondition(n >= 0 && n < (count ?? ImpressConnection.maxSlides), "a preview out of the show")
                precondition(png.count <= ImpressConnection.maxPreviewBytes && png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a preview that is no PNG or too large")
            case .slideNotes(let n, let text):
                precondition(n >= 0 && n < (count ?? ImpressConnection.maxSlides), "notes out of the show")
                checkPlain(text, newlines: true)
            case .slideshowTitle(let title):
                checkPlain(title, newlines: false)
                precondition(title.utf8.count <= ImpressConnection.maxTitleBytes, "a title too long")
            case .serverVersion(let v):
                precondition(v.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "a version not printable ASCII")
            case .paired, .waitingForPin:
                break
            }
        }
    }
    let command = whole.command(.transitionNext)
    precondition((command != nil) == (whole.state == .paired), "a command while not paired, or none while paired")
    return 0
}

/// No control character but "\n" (and none at all when `newlines` is false).
private func checkPlain(_ text: String, newlines: Bool) {
    for s in text.unicodeScalars {
        if s == "\n" { precondition(newlines, "a newline in one line"); continue }
        precondition(s.value >= 0x20 && !(0x7F...0x9F).contains(s.value), "a control character in plain text")
    }
}
