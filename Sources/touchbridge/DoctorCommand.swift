// `touchbridge doctor`: what touchbridge needs here, checked the way `serve` would use it, with the fix for
// each thing that is wrong (see TouchDaemon's `Doctor`).
import ArgumentParser
import TouchDaemon

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what touchbridge needs here and say how to fix what is wrong: the display, the backend it would choose and why, uinput, the portal, the ports and the firewall, the pairing secret, the addresses a phone can reach.",
        discussion: """
            One line per check: ok, note (worth knowing; touchbridge runs) or problem (it cannot work as set \
            up), what was seen, and for each problem the fix on the next line. Exits 1 when there is a \
            problem, else 0. It changes nothing: uinput's devices are made and removed at once, the portal is \
            asked only what it offers, the ports are bound and closed, and the firewall's rules are only \
            listed (nftables' and ufw's can be read only as root: run it with sudo to check them). Takes the \
            options of serve, as they would be given to it, and reads the same config file.
            """
    )

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Options of serve, as they would be given to it.", valueName: "serve-options"))
    var serveOptions: [String] = []

    func run() throws {
        let serve = try Serve.parse(serveOptions)
        let settings = try ServeSettings.read(serve, command: "doctor").settings
        let findings = Doctor.check(serve.daemonSettings(settings))
        for finding in findings {
            for line in finding.lines { print(line) }
        }
        let problems = findings.filter { $0.status == .problem }.count
        print(problems == 0 ? "no problem found" : "\(problems) problem\(problems == 1 ? "" : "s") found")
        if problems > 0 { throw ExitCode(1) }
    }
}
