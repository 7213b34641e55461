// `touchbridge doctor`'s findings: what each check saw, in one line, and the fix in one line.

/// One check's outcome.
public struct Finding: Equatable, Sendable {
    public enum Status: String, Sendable {
        /// It works.
        case ok
        /// Worth knowing; touchbridge runs.
        case note
        /// touchbridge cannot work as set up: the fix says what to do.
        case problem
    }

    public var status: Status
    /// What was checked: display, backend, uinput, portal, port, firewall, pairing, address.
    public var topic: String
    public var what: String
    /// What to do, one line (nil when there is nothing to do).
    public var fix: String?

    public init(_ status: Status, _ topic: String, _ what: String, fix: String? = nil) {
        self.status = status
        self.topic = topic
        self.what = what
        self.fix = fix
    }

    /// The finding as printed: the status, the topic, what; the fix on the next line, indented.
    public var lines: [String] {
        func padded(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: max(1, width - s.count)) }
        let head = padded(status.rawValue, 8) + padded(topic, 10) + what
        guard let fix else { return [head] }
        return [head, String(repeating: " ", count: 18) + "fix: " + fix]
    }
}

/// A port touchbridge listens on, with its transport and what it is for.
public struct ListeningPort: Equatable, Sendable, CustomStringConvertible {
    public enum Transport: String, Sendable { case udp, tcp }
    public var transport: Transport
    public var number: Int
    /// What listens there: "the page", "PoseAI apps", "TUIO".
    public var purpose: String

    public init(_ transport: Transport, _ number: Int, _ purpose: String) {
        self.transport = transport
        self.number = number
        self.purpose = purpose
    }

    /// "TCP 8000".
    public var description: String { "\(transport.rawValue.uppercased()) \(number)" }
    /// "8000/tcp", as ufw and firewalld write it.
    public var slashed: String { "\(number)/\(transport.rawValue)" }
}
