// What the firewalls' own tools say about touchbridge's ports, read from their output (pure: the text
// in, findings out). Three are read: nftables (`nft list ruleset`, which also holds what iptables-nft
// made), ufw (`ufw status`) and firewalld (`firewall-cmd --list-ports` and `--list-services`). A rule set
// made by ufw or firewalld is judged by that tool's answer, not by its nftables chains.

public enum FirewallRules {
    /// An nftables base chain on the input hook that drops what no rule accepts.
    struct DroppingChain {
        var family: String
        var table: String
        var name: String
        var rules: [String]
    }

    /// The input-hook chains of `ruleset` (the text of `nft list ruleset`) whose policy is drop, with
    /// their rules; not those of tables that ufw or firewalld made (their jumps go to `ufw-` chains, or
    /// the table is named firewalld).
    static func droppingInputChains(_ ruleset: String) -> [DroppingChain] {
        var chains: [DroppingChain] = []
        var family = "", table = ""
        var current: DroppingChain?
        var isInput = false, drops = false
        var depth = 0
        func finish() {
            if var c = current, isInput, drops {
                c.rules.removeAll { $0.hasPrefix("type ") }
                chains.append(c)
            }
            current = nil
            isInput = false
            drops = false
        }
        for raw in ruleset.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.trimmingSpaces
            let words = line.split(separator: " ").map(String.init)
            if depth == 0, words.first == "table", words.count >= 3 {
                family = words[1]
                table = words[2]
            } else if depth == 1, words.first == "chain", words.count >= 2 {
                current = DroppingChain(family: family, table: table, name: words[1], rules: [])
            } else if depth == 2, current != nil {
                if line.hasPrefix("type filter hook input") {
                    isInput = true
                    drops = line.contains("policy drop")
                } else if line != "}" {
                    current?.rules.append(line)
                }
            }
            if line.hasSuffix("{") { depth += 1 }
            if line == "}" {
                if depth == 2 { finish() }
                depth = max(0, depth - 1)
            }
        }
        return chains.filter { chain in
            chain.table != "firewalld" && !chain.rules.contains { $0.contains("jump ufw") || $0.contains("jump ufw-") }
        }
    }

    /// Whether `rule` accepts `port`: it ends in accept and names the port as a destination port of its
    /// transport (`tcp dport 8000`, `udp dport { 3333, 8080 }`, `th dport 8000`, `dport 8000-8100`).
    static func accepts(_ rule: String, _ port: ListeningPort) -> Bool {
        guard rule.hasSuffix("accept") else { return false }
        let words = rule.replacingCommas.split(separator: " ").map(String.init)
        guard let at = words.firstIndex(of: "dport"), at > 0 else { return false }
        let proto = words[at - 1]
        guard proto == port.transport.rawValue || proto == "th" else { return false }
        var values: [String] = []
        if at + 1 < words.count, words[at + 1] == "{" {
            var k = at + 2
            while k < words.count, words[k] != "}" { values.append(words[k]); k += 1 }
        } else if at + 1 < words.count {
            values.append(words[at + 1])
        }
        return values.contains { value in
            if let n = Int(value) { return n == port.number }
            let ends = value.split(separator: "-")
            if ends.count == 2, let low = Int(ends[0]), let high = Int(ends[1]) { return (low...high).contains(port.number) }
            return false
        }
    }

    /// The findings of an nftables rule set: one problem per input chain that drops by default and
    /// accepts none of some ports; an ok when none does.
    public static func nftables(_ ruleset: String, ports: [ListeningPort]) -> [Finding] {
        var findings: [Finding] = []
        for chain in droppingInputChains(ruleset) {
            let blocked = ports.filter { port in !chain.rules.contains { accepts($0, port) } }
            guard !blocked.isEmpty else { continue }
            let names = blocked.map(\.description).joined(separator: ", ")
            let rules = blocked.map { "sudo nft add rule \(chain.family) \(chain.table) \(chain.name) \($0.transport.rawValue) dport \($0.number) accept" }
            findings.append(Finding(.problem, "firewall",
                                    "nftables: chain \(chain.family) \(chain.table) \(chain.name) drops what it does not accept, and accepts no \(names)",
                                    fix: rules.joined(separator: "; ") + " (and keep \(blocked.count == 1 ? "it" : "them") in /etc/nftables.conf)"))
        }
        if findings.isEmpty {
            findings.append(Finding(.ok, "firewall", "nftables: no input chain drops \(ports.map(\.description).joined(separator: ", "))"))
        }
        return findings
    }

    /// The findings of `ufw status`'s output: nothing to say when it is inactive; else a problem for
    /// the ports no ALLOW line names.
    public static func ufw(_ status: String, ports: [ListeningPort]) -> [Finding] {
        let lines = status.split(separator: "\n").map { $0.trimmingSpaces }
        guard lines.contains(where: { $0.hasPrefix("Status: active") }) else {
            return [Finding(.ok, "firewall", "ufw is inactive")]
        }
        let blocked = ports.filter { port in
            !lines.contains { line in
                let words = line.split(separator: " ").map(String.init)
                guard let first = words.first, words.contains("ALLOW") else { return false }
                return first == port.slashed || first == String(port.number)
            }
        }
        guard !blocked.isEmpty else { return [Finding(.ok, "firewall", "ufw allows \(ports.map(\.description).joined(separator: ", "))")] }
        return [Finding(.problem, "firewall", "ufw is active and allows no \(blocked.map(\.description).joined(separator: ", "))",
                        fix: blocked.map { "sudo ufw allow \($0.slashed)" }.joined(separator: "; ") + " (or only from your network: sudo ufw allow from 192.168.1.0/24 to any port N proto P)")]
    }

    /// The findings of firewalld's default zone: `ports` (`firewall-cmd --list-ports`) and `services`
    /// (`--list-services`; a service's ports are not looked up, so only the ports count).
    public static func firewalld(listedPorts: String, ports: [ListeningPort]) -> [Finding] {
        let open = Set(listedPorts.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
        let blocked = ports.filter { !open.contains($0.slashed) }
        guard !blocked.isEmpty else { return [Finding(.ok, "firewall", "firewalld's zone opens \(ports.map(\.description).joined(separator: ", "))")] }
        return [Finding(.problem, "firewall", "firewalld is running and its zone opens no \(blocked.map(\.description).joined(separator: ", "))",
                        fix: blocked.map { "sudo firewall-cmd --permanent --add-port=\($0.slashed)" }.joined(separator: "; ") + "; sudo firewall-cmd --reload")]
    }
}

extension Substring {
    /// Without the spaces and tabs at either end.
    var trimmingSpaces: String {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" { s = s.dropLast() }
        return String(s)
    }
}

extension String {
    /// With every comma a space, and braces set apart: `{ 3333, 8080 }` as words.
    var replacingCommas: String {
        String(map { $0 == "," ? " " : $0 }).replacingBraces
    }

    private var replacingBraces: String {
        var out = ""
        for c in self {
            if c == "{" || c == "}" { out += " \(c) " } else { out.append(c) }
        }
        return out
    }
}
