import ArgumentParser
import TouchFiles

// The checks that take more than one value: the TLS files read as the server will read them, and the rules
// between settings, which may come from the file and the command line apart.

extension ServeSettings {
    /// The TLS certificate and key, read as the web server will read them (`TouchFiles`): one that is not
    /// a regular file of at most 1 MiB ends `serve` at once with its exit status (66 or 65), before any
    /// listener is opened, rather than once the UDP port is bound.
    func checkTLSFiles() throws {
        guard let tlsCert, let tlsKey else { return }
        do {
            _ = try BoundedFile.read(tlsCert, as: .certificate)
            _ = try BoundedFile.read(tlsKey, as: .privateKey)
        } catch let problem as FileProblem {
            writeError("touchbridge serve: --tls-\(problem.noun == FileKind.certificate.noun ? "cert" : "key") \(problem)")
            throw ExitCode(problem.exitStatus)
        }
    }

    /// The rules between settings, which may come from the file and the command line apart.
    func checkTogether() throws {
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        if multitouch && backend == .uinput {
            throw ValidationError("--multitouch is for --backend xtest: with uinput every finger is already a real touch")
        }
    }
}
