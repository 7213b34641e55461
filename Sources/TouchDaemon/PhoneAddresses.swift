import NIOCore
import TouchCore
import TouchNet
import TouchWeb

/// The addresses a phone on the network should send to, for the start-up line.
public enum PhoneAddresses {
    public static func describe(bind: String, port: Int, allowList: AllowList) -> String {
        let wildcard = bind == "0.0.0.0" || bind == "::"
        guard wildcard else { return "\(bind):\(port)" }
        let wantV6 = bind == "::"
        var found: [String] = []
        if let devices = try? System.enumerateDevices() {
            for device in devices {
                guard let address = device.address, let ip = address.ipAddress else { continue }
                switch address {
                case .v4:
                    guard !ip.hasPrefix("127.") else { continue }
                    found.append("\(ip):\(port)")
                case .v6 where wantV6:
                    guard ip != "::1", !ip.lowercased().hasPrefix("fe80") else { continue }
                    found.append("[\(ip)]:\(port)")
                default:
                    continue
                }
            }
        }
        if found.isEmpty { return wantV6 ? "[::1]:\(port)" : "127.0.0.1:\(port)" }
        return found.joined(separator: ", ")
    }

    /// The web page's addresses a phone can open, each with `#k=<secret>` (the fragment never reaches a
    /// server's log: browsers do not send it).
    public static func pageURLs(scheme: String, bind: String, port: Int, allowList: AllowList, secret: PairingSecret) -> [String] {
        describe(bind: bind, port: port, allowList: allowList)
            .split(separator: ", ").map { "\(scheme)://\($0)/#k=\(secret.value)" }
    }
}
