// `touchbridge doctor`'s reading of the firewalls' own tools: rule sets as `nft list ruleset` prints them,
// `ufw status` and `firewall-cmd --list-ports` outputs, each with a port accepted and one not.
import Testing
import TouchDaemon

@Suite struct FirewallRulesTests {
    let ports = [ListeningPort(.tcp, 8000, "the page"), ListeningPort(.udp, 8080, "PoseAI apps"), ListeningPort(.udp, 3333, "TUIO")]

    @Test func aDroppingInputChainNamesThePortsItDoesNotAccept() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy drop;
            \t\tct state established,related accept
            \t\tiif "lo" accept
            \t\tudp dport { 3333, 8080 } accept
            \t\ttcp dport 22 accept
            \t}
            \tchain forward {
            \t\ttype filter hook forward priority filter; policy drop;
            \t}
            }
            """
        let findings = FirewallRules.nftables(ruleset, ports: ports)
        #expect(findings.count == 1)
        #expect(findings.first?.status == .problem)
        #expect(findings.first?.what == "nftables: chain inet filter input drops what it does not accept, and accepts no TCP 8000")
        #expect(findings.first?.fix == "sudo nft add rule inet filter input tcp dport 8000 accept (and keep it in /etc/nftables.conf)")
    }

    @Test func rangesSetsAndAnyTransportAccept() {
        let ruleset = """
            table ip guard {
            \tchain in {
            \t\ttype filter hook input priority 0; policy drop;
            \t\ttcp dport 7990-8010 accept
            \t\tth dport 8080 accept
            \t\tudp dport { 53, 3333 } counter accept
            \t}
            }
            """
        #expect(FirewallRules.nftables(ruleset, ports: ports).map(\.status) == [.ok])
    }

    @Test func anAcceptingPolicyADropRuleElsewhereAndToolsOwnTablesSayNothing() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t}
            \tchain output {
            \t\ttype filter hook output priority filter; policy drop;
            \t}
            }
            table inet firewalld {
            \tchain filter_INPUT {
            \t\ttype filter hook input priority filter + 10; policy drop;
            \t}
            }
            table ip filter {
            \tchain INPUT {
            \t\ttype filter hook input priority filter; policy drop;
            \t\tcounter packets 0 bytes 0 jump ufw-before-input
            \t}
            }
            """
        #expect(FirewallRules.nftables(ruleset, ports: ports).map(\.status) == [.ok])
    }

    @Test func aPortNamedOnlyInADropRuleIsNotAccepted() {
        let ruleset = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy drop;
            \t\ttcp dport 8000 drop
            \t\tudp dport { 3333, 8080 } accept
            \t}
            }
            """
        #expect(FirewallRules.nftables(ruleset, ports: ports).first?.what.hasSuffix("accepts no TCP 8000") == true)
    }

    @Test func ufwActiveWithoutThePagesPort() {
        let status = """
            Status: active

            To                         Action      From
            --                         ------      ----
            22/tcp                     ALLOW       Anywhere
            8080/udp                   ALLOW       192.168.1.0/24
            3333                       ALLOW       Anywhere
            8000/tcp                   DENY        Anywhere
            """
        let findings = FirewallRules.ufw(status, ports: ports)
        #expect(findings.map(\.status) == [.problem])
        #expect(findings.first?.what == "ufw is active and allows no TCP 8000")
        #expect(findings.first?.fix?.hasPrefix("sudo ufw allow 8000/tcp") == true)
        #expect(FirewallRules.ufw("Status: inactive\n", ports: ports).map(\.status) == [.ok])
    }

    @Test func firewalldWithoutTheUDPPorts() {
        let findings = FirewallRules.firewalld(listedPorts: "8000/tcp 22/tcp\n", ports: ports)
        #expect(findings.first?.what == "firewalld is running and its zone opens no UDP 8080, UDP 3333")
        #expect(findings.first?.fix == "sudo firewall-cmd --permanent --add-port=8080/udp; sudo firewall-cmd --permanent --add-port=3333/udp; sudo firewall-cmd --reload")
        #expect(FirewallRules.firewalld(listedPorts: "3333/udp 8080/udp 8000/tcp", ports: ports).map(\.status) == [.ok])
    }
}
