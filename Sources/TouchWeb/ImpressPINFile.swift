// The PIN touchbridge pairs with LibreOffice Impress by, kept beside the pairing secret: made once,
// then the same at every start, so that Impress, which remembers a remote by its name and PIN, pairs
// with no dialog after the first time. Read as the secret is (SecretFile.swift): the user's own file in
// the user's own directory, regular, bounded, 0600.
import FoundationEssentials
import Glibc
import TouchFiles

public enum ImpressPINFile {
    /// The file's name in the state directory.
    public static let name = "impress-pin"

    /// The PIN kept in `directory/impress-pin`, or a new one made and kept there when there is none.
    /// `created` says a new one was made; `note` that the file's mode was repaired. Throws a
    /// `SecretFileError` for a file that is not a PIN (four digits) or not the user's own: it is never
    /// replaced.
    public static func load(directory: String) throws -> (pin: String, created: Bool, note: String?) {
        if try SecretFile.directory(directory) == nil {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        guard let checked = try SecretFile.directory(directory) else {
            throw SecretFileError(path: directory, problem: "cannot be made", fix: "make it a directory of your own, or set XDG_STATE_HOME to one")
        }
        if let kept = try read(in: checked) { return (kept.pin, false, kept.note) }
        var generator = SystemRandomNumberGenerator()
        let value = Int.random(in: 0..<10_000, using: &generator)
        let pin = String(repeating: "0", count: 4 - String(value).count) + String(value)
        try SecretFile.write(line: pin, to: directory + "/" + name, replace: false)
        return (pin, true, nil)
    }

    /// The fix for a file that is there but is not a PIN.
    static let fix = "remove it (a new PIN is then made, and Impress asks for it once) or set impress-pin in the config file"

    static func read(in directory: OpenDirectory) throws(SecretFileError) -> (pin: String, note: String?)? {
        let path = directory.path + "/" + name
        let file: ReadableFile
        do throws(FileProblem) {
            file = try ReadableFile(name, as: .pairingSecret, in: directory, followingLinks: false)
        } catch {
            if error.reason == .missing { return nil }
            throw SecretFileError(path: path, problem: "cannot be read as the Impress PIN (\(error.phrase))", fix: fix)
        }
        let me = FileCalls.effectiveUser()
        guard file.status.owner == me else {
            throw SecretFileError(path: path, problem: "is owned by uid \(file.status.owner), not by you (uid \(me)), so it is not your PIN", fix: fix)
        }
        let bytes: [UInt8]
        do throws(FileProblem) { bytes = try file.readAll() } catch {
            throw SecretFileError(path: path, problem: "cannot be read as the Impress PIN (\(error.phrase))", fix: fix)
        }
        let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var text = Array(bytes.drop(while: { space.contains($0) }))
        while let last = text.last, space.contains(last) { text.removeLast() }
        guard text.count == 4, text.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw SecretFileError(path: path, problem: "holds something other than a PIN (four digits)", fix: fix)
        }
        let pin = String(decoding: text, as: UTF8.self)
        let mode = file.status.permissions
        guard mode != 0o600 else { return (pin, nil) }
        do throws(Errno) { try file.setPermissions(0o600) } catch {
            throw SecretFileError(path: path, problem: "has mode \(FileStatus.octal(mode)), not 0600, and cannot be made private (\(error))",
                                  fix: "make it private with: chmod 600 \(path)")
        }
        return (pin, "\(path) had mode \(FileStatus.octal(mode)), not 0600: made it 0600")
    }
}
