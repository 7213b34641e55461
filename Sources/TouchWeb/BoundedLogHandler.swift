// Hummingbird's and NIO's own log lines (the server's logger, at --log-level debug only: above it they
// are off, see `WebServer.start`), bounded as touchbridge's own lines are: a peer causes them (a refused
// upgrade, a connection that ends mid-request, a parse error), so at most one line per call site per
// 10 s, with the counts of the ones left out (`DropLog`'s words). Without it, every refused upgrade wrote
// a line at debug.
import Logging
import NIOCore
import Synchronization
import TouchCore

/// Passes a library's lines to `base`, at most one per call site (file and line) per `interval`.
struct BoundedLogHandler: LogHandler {
    var base: any LogHandler
    private let state: Shared

    /// Call sites counted apart at most; the ones after share one count.
    static let maxSites = 32

    /// The counts, shared by every copy of the handler (a `Logger` is a value: copies keep counting here).
    final class Shared: Sendable {
        struct Site {
            var lastReport: UInt64
            var suppressed: UInt64 = 0
            var total: UInt64 = 1
        }
        let interval: UInt64
        let sites = Mutex<[String: Site]>([:])

        init(interval: UInt64) { self.interval = interval }

        /// The counts' words to add when this line is logged now, or nil when it is left out.
        func admit(_ site: String, now: UInt64) -> String? {
            sites.withLock { sites in
                let key = sites[site] != nil || sites.count < BoundedLogHandler.maxSites ? site : "other"
                guard var entry = sites[key] else {
                    sites[key] = Site(lastReport: now)
                    return ""
                }
                entry.total &+= 1
                defer { sites[key] = entry }
                if now &- entry.lastReport < interval {
                    entry.suppressed &+= 1
                    return nil
                }
                let report = DropLog<1>.Report(reasonIndex: 0, suppressed: entry.suppressed, total: entry.total)
                entry.lastReport = now
                entry.suppressed = 0
                return report.countsSuffix
            }
        }
    }

    /// - Parameter interval: the least time between two lines of one call site, in nanoseconds.
    init(base: any LogHandler, interval: UInt64 = 10_000_000_000) {
        self.base = base
        state = Shared(interval: interval)
    }

    func log(event: LogEvent) {
        // No loop here: the monotonic clock the loops use (CLOCK_MONOTONIC).
        guard let suffix = state.admit("\(event.file):\(event.line)", now: NIODeadline.now().uptimeNanoseconds) else { return }
        var event = event
        if !suffix.isEmpty { event.message = "\(event.message)\(suffix)" }
        base.log(event: event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }
}
