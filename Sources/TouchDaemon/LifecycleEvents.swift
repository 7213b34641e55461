/// What ends a wait of the lifecycle: a signal, the desktop going away, or (only while waiting for a
/// display with `--reconnect`) a second passing. Events come from the watchers' threads, the loop and the
/// tick task through `sink`; only the lifecycle's task reads them.
final class LifecycleEvents {
    enum Event: Sendable {
        case signal(Int32)
        case desktopLost
        /// The input backend's own connection ended (the portal's EIS: the compositor or the session
        /// went away), in words.
        case inputLost(String)
        case tick
    }

    private var events: AsyncStream<Event>.Iterator
    /// Where every event is put, from any thread.
    let sink: AsyncStream<Event>.Continuation

    init() {
        let (stream, sink) = AsyncStream.makeStream(of: Event.self)
        events = stream.makeAsyncIterator()
        self.sink = sink
    }

    /// The next event; nil when the stream ended.
    func next() async -> Event? { await events.next() }

    /// Waits a second, or less when a signal comes first: the signal's number, else nil. A desktop lost
    /// meanwhile is nothing: none is connected while this waits.
    func waitASecond() async -> Int32? {
        let sink = self.sink
        // Task.sleep is a timer on one of NIO's loops (`main` installs them as Swift concurrency's
        // executors, sleeps included): no Dispatch pool.
        let ticker = Task {
            do {
                try await Task.sleep(for: .seconds(1))
                sink.yield(.tick)
            } catch {
                // Cancelled: the wait ended on a signal first.
            }
        }
        defer { ticker.cancel() }
        while true {
            switch await events.next() {
            case .desktopLost?, .inputLost?: continue
            case .signal(let number)?: return number
            case .tick?, nil: return nil
            }
        }
    }
}
