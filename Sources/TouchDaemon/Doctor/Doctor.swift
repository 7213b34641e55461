// `touchbridge doctor`: checks what touchbridge needs, the way `serve` would use it, and says for each
// thing what it saw and, when something is wrong, the fix in one line. It changes nothing on the desktop:
// uinput's devices are made and removed at once (the proof `serve` uses), the portal is asked only what it
// offers (no session, no dialog), the ports are bound and closed, the firewalls' tools only list.
import TouchCore
import TouchFiles
import TouchOutput
import TouchPortal
import TouchWayland
import TouchWeb
import TouchX11

#if canImport(Glibc)
import Glibc
#endif

public enum Doctor {
    /// Every check, in the order a person would fix things: the desktop, the backend and uinput, the
    /// portal, the ports, the firewall, the pairing secret, the addresses a phone can reach.
    public static func check(_ s: DaemonSettings) -> [Finding] {
        var findings = display(s)
        let (choice, uinput) = InputBackends.doctorChoice(s)
        findings += backend(choice, uinput: uinput, path: s.uinputPath)
        findings += portal(choice, backend: s.backend)
        let ports = listeningPorts(s)
        findings += portsFree(ports, bind: s.bind)
        findings += firewall(ports)
        findings += pairing(s)
        findings += addresses(s)
        return findings
    }

    /// The ports `s` listens on: PoseAI's and TUIO's (UDP), the page's (TCP), each unless 0.
    static func listeningPorts(_ s: DaemonSettings) -> [ListeningPort] {
        var ports: [ListeningPort] = []
        if s.httpPort != 0 { ports.append(ListeningPort(.tcp, s.httpPort, "the page")) }
        if s.udpPort != 0 { ports.append(ListeningPort(.udp, s.udpPort, "PoseAI apps")) }
        if s.tuioPort != 0 { ports.append(ListeningPort(.udp, s.tuioPort, "TUIO")) }
        return ports
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: the desktop

    static func display(_ s: DaemonSettings) -> [Finding] {
        var findings: [Finding] = []
        let x = s.display ?? environment("DISPLAY")
        let wayland = environment("WAYLAND_DISPLAY")
        let importFix = "run touchbridge in the desktop session, or give the user service the session's variables: systemctl --user import-environment DISPLAY WAYLAND_DISPLAY"
        if let wayland {
            do throws(WaylandError) {
                let desktop = try WaylandDesktop(name: wayland)
                _ = desktop.close()
                findings.append(Finding(.ok, "display", "Wayland display \(wayland) answers"))
            } catch {
                findings.append(Finding(.problem, "display", "Wayland display \(wayland) does not answer: \(error)", fix: importFix))
            }
        }
        if let x {
            do throws(X11Error) {
                let display = try XDisplay(name: x)
                display.close()
                findings.append(Finding(.ok, "display", "X display \(x) answers\(wayland == nil ? "" : " (Xwayland: the overlay goes there)")"))
            } catch {
                findings.append(Finding(.problem, "display", "X display \(x) does not answer: \(error)",
                                        fix: "start it, or name the right one (--display, DISPLAY); an X server refusing the user: xhost +si:localuser:$USER"))
            }
        }
        if x == nil && wayland == nil {
            findings.append(Finding(.note, "display", "neither DISPLAY nor WAYLAND_DISPLAY is set: only uinput can drive, with no overlay", fix: importFix))
        }
        return findings
    }

    // MARK: the backend and uinput

    static func backend(_ choice: Result<OutputChoice, OutputChoiceFailure>, uinput: OutputError?, path: String) -> [Finding] {
        var findings: [Finding] = []
        let udevFix = "the package's udev rule grants \(path) to the user at the machine's own seat (log in again after installing it); for other users a rule of your own (README, \"uinput: permission denied\")"
        switch choice {
        case .success(let c):
            findings.append(Finding(.ok, "backend", c.reason))
            if let uinput {
                findings.append(Finding(.note, "uinput", "\(path) cannot make devices (\(uinput.message)): no pen tablet, native touchpad or real touches", fix: udevFix))
            } else {
                findings.append(Finding(.ok, "uinput", "\(path) makes devices"))
            }
        case .failure(let failure):
            findings.append(Finding(.problem, "backend", failure.message))
            if let uinput { findings.append(Finding(.problem, "uinput", "\(path) cannot make devices: \(uinput.message)", fix: udevFix)) }
        }
        return findings
    }

    // MARK: the portal

    /// Asked only where it matters: the choice is the portal, or a Wayland session is there.
    static func portal(_ choice: Result<OutputChoice, OutputChoiceFailure>, backend: BackendChoice) -> [Finding] {
        let chosen = (try? choice.get())?.input == .portal
        guard chosen || backend == .portal || environment("WAYLAND_DISPLAY") != nil || environment("XDG_SESSION_TYPE") == "wayland" else { return [] }
        let status: Finding.Status = chosen ? .problem : .note
        do throws(PortalFailure) {
            let offer = try PortalSession.interfaceOffer()
            offer.bus.close()
            if let why = EIContext.load() {
                return [Finding(status, "portal", "RemoteDesktop version \(offer.version) is there, but libei does not load: \(why)", fix: "install libei1 (Debian 13, Ubuntu 24.04 and later)")]
            }
            let devices = offer.available.map { PortalDevices(rawValue: $0).description } ?? "(unsaid)"
            return [Finding(.ok, "portal", "RemoteDesktop version \(offer.version) offers \(devices); libei loads")]
        } catch {
            return [Finding(status, "portal", error.message, fix: chosen ? "give the user uinput instead (the udev rule), or use GNOME 45+ or Plasma 6.1+ with xdg-desktop-portal 1.18" : nil)]
        }
    }

    // MARK: the ports and the firewall

    static func portsFree(_ ports: [ListeningPort], bind: String) -> [Finding] {
        let running = ports.first { $0.transport == .tcp }.map { PortProbe.touchbridgeAnswers(tcpPort: $0.number) } ?? false
        return ports.map { port in
            switch PortProbe.bind(port, address: bind) {
            case .free:
                return Finding(.ok, "port", "\(port) (\(port.purpose)) is free on \(bind)")
            case .inUse where running:
                return Finding(.note, "port", "\(port) (\(port.purpose)) is in use: a touchbridge answers on TCP \(ports.first { $0.transport == .tcp }!.number) already")
            case .inUse:
                let ss = port.transport == .tcp ? "ss -ltnp" : "ss -lunp"
                return Finding(.problem, "port", "\(port) (\(port.purpose)) is in use by another program",
                               fix: "see which with: \(ss) 'sport = :\(port.number)'; or move touchbridge's with --\(port.purpose == "the page" ? "http" : port.purpose == "TUIO" ? "tuio" : "udp")-port")
            case .refused(let why):
                return Finding(.problem, "port", "\(port) (\(port.purpose)) cannot be bound on \(bind): \(why)", fix: "check --bind (an address of this machine, 0.0.0.0 or ::)")
            }
        }
    }

    static func firewall(_ ports: [ListeningPort]) -> [Finding] {
        guard !ports.isEmpty else { return [] }
        var findings: [Finding] = []
        if ToolRun.locate("firewall-cmd") != nil {
            let state = ToolRun.run(["firewall-cmd", "--state"])
            if state.status == 0, state.output.hasPrefix("running") {
                let listed = ToolRun.run(["firewall-cmd", "--list-ports"])
                findings += listed.status == 0 ? FirewallRules.firewalld(listedPorts: listed.output, ports: ports)
                    : [Finding(.note, "firewall", "firewalld is running; its ports could not be listed: \(listed.output.firstLine)",
                               fix: "open them: " + ports.map { "sudo firewall-cmd --permanent --add-port=\($0.slashed)" }.joined(separator: "; "))]
            }
        }
        if ToolRun.locate("ufw") != nil {
            let status = ToolRun.run(["ufw", "status"])
            if status.status == 0 {
                findings += FirewallRules.ufw(status.output, ports: ports).filter { $0.what != "ufw is inactive" }
            } else if ufwEnabled() {
                findings.append(Finding(.note, "firewall", "ufw is enabled; its rules can be read only as root (sudo touchbridge doctor)",
                                        fix: "open the ports: " + ports.map { "sudo ufw allow \($0.slashed)" }.joined(separator: "; ")))
            }
        }
        if ToolRun.locate("nft") != nil {
            let ruleset = ToolRun.run(["nft", "list", "ruleset"])
            if ruleset.status == 0 {
                findings += FirewallRules.nftables(ruleset.output, ports: ports)
            } else {
                findings.append(Finding(.note, "firewall", "the nftables rules can be read only as root: \(ruleset.output.firstLine)",
                                        fix: "sudo touchbridge doctor checks them"))
            }
        }
        if findings.isEmpty {
            findings.append(Finding(.ok, "firewall", "no firewall tool here (nft, ufw, firewall-cmd) names a rule"))
        }
        return findings
    }

    /// Whether /etc/ufw/ufw.conf says ENABLED=yes.
    static func ufwEnabled() -> Bool {
        guard let bytes = try? BoundedFile.read("/etc/ufw/ufw.conf", as: .config) else { return false }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").contains { $0.hasPrefix("ENABLED=yes") }
    }

    // MARK: the pairing secret and the addresses

    static func pairing(_ s: DaemonSettings) -> [Finding] {
        guard s.httpPort != 0 else { return [] }
        let directory = PairingSecret.stateDirectory()
        let path = directory + "/pairing-secret"
        do throws(SecretFileError) {
            let (kept, note) = try PairingSecret.inspect(directory: directory)
            guard kept else { return [Finding(.ok, "pairing", "no secret yet in \(path): the first start makes one (touchbridge pair shows it)")] }
            return [Finding(.ok, "pairing", "the secret in \(path) is yours and private\(note.map { " (\($0))" } ?? "")")]
        } catch {
            return [Finding(.problem, "pairing", "\(error.path) \(error.problem)", fix: error.fix)]
        }
    }

    static func addresses(_ s: DaemonSettings) -> [Finding] {
        guard s.httpPort != 0 else { return [] }
        let scheme = s.tlsCertificate == nil ? "http" : "https"
        let described = PhoneAddresses.describe(bind: s.bind, port: s.httpPort, allowList: s.allowList)
        let loopbackOnly = described.hasPrefix("127.") || described.hasPrefix("[::1]")
        let urls = described.split(separator: ", ").map { "\(scheme)://\($0)/" }.joined(separator: " ")
        if loopbackOnly {
            return [Finding(.problem, "address", "no address a phone can reach: only \(urls)",
                            fix: "join this machine to the phone's network (Wi-Fi or Ethernet), or bind an address there with --bind")]
        }
        return [Finding(.ok, "address", "a phone on this network opens \(urls) (touchbridge pair adds the secret)")]
    }
}

extension String {
    /// The first line.
    var firstLine: String { split(separator: "\n").first.map(String.init) ?? "" }
}
