import Logging
import NIOCore
import TouchCore
import TouchImpress
import TouchNet
import TouchOutput
import TouchWire

// The live view as the host runs it: the page's requests to the `ViewMachine`, and its actions performed
// (capture, encode, send), with their failures logged, bounded.

extension BridgeHost {
    /// A view request of the page (`view W H`, `view off`) that the Bridge admitted: the machine's
    /// answer performed; a refusal is the reply.
    func viewRequest(_ request: ViewRequest, from sender: Sender, at now: Instant) -> BridgeReply? {
        var changed = false
        let action = view.request(request, from: sender, at: now, viewingChanged: &changed)
        if changed {
            if view.viewing { viewStarted() } else { viewStopped("the page turned its view off") }
        }
        if case .refuse(let why) = action {
            if let report = viewRefusalsLogged.record(reasonIndex: why.rawValue, at: now) {
                logger.notice("view: no picture for \(sender.address): \(why)\(report.countsSuffix)")
            }
            return .viewRefused(why)
        }
        performView(action)
        return nil
    }

    func viewStarted() {
        guard let capture = desktop?.view else { return }
        do throws(OutputError) {
            try capture.watch(true)
            if let target = people.target?.rect { try capture.showMark(in: target) }
            logger.notice("view: \(view.holder.map { "\($0.address)" } ?? "?") is viewing \(people.target.map(\.description) ?? "the screen")")
        } catch {
            viewFailed(error)
        }
    }

    func viewStopped(_ reason: String) {
        armViewRetry()
        if let capture = desktop?.view {
            do throws(OutputError) { try capture.watch(false) } catch { logOutput(error) }
        }
        logger.notice("view: viewing stopped (\(reason))")
    }

    /// The capture failed: no picture until the desktop is attached again. The page viewing is told at
    /// once (`view none no-picture: …`), as it would be at its next ask.
    func viewFailed(_ error: OutputError) {
        logViewError(error)
        let holder = view.holder
        if view.setAvailable(false) { viewEnded(for: holder, "the capture failed") }
    }

    /// The picture did not come (`ViewMachine.pictureLimit`): the machine stopped the view; the page is
    /// told, as for a failure, but the desktop stays available to a later ask.
    func viewGivenUp(_ error: OutputError, waited: Interval) {
        var late = error
        late.message += "; none came within \(waited.milliseconds) ms"
        logViewError(late)
        viewEnded(for: view.holder, "no picture came")
    }

    private func logViewError(_ error: OutputError) {
        if let report = viewErrorsLogged.record(reasonIndex: 0, at: now()) {
            logger.error("view: \(error): the page gets no picture\(report.countsSuffix)")
        }
    }

    /// Viewing ended without the page's word: the capture let go, and the page told why.
    private func viewEnded(for holder: Sender?, _ reason: String) {
        viewStopped(reason)
        if let holder, holder.transport == .web, let line = BridgeReply.viewRefused(.noPicture).pageText {
            toPage?(holder.address, [line])
        }
    }

    /// Keeps the view's retry timer armed for `view.retryAt`, and none when nothing is due.
    func armViewRetry() {
        viewTimer?.cancel()
        viewTimer = nil
        guard let at = view.retryAt else { return }
        viewTimer = loop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(at.nanoseconds)) { [self] in
            viewTimer = nil
            performView(view.timer(at: now()))
        }
    }

    /// Captures, encodes and sends a frame when the machine says so.
    func performView(_ action: ViewAction) {
        guard case .capture(let size) = action else { return }
        if viewTimer != nil { armViewRetry() }
        guard let capture = desktop?.view, let target = people.target?.rect, let holder = view.holder else { return }
        let picture = ViewMachine.fit(size, shape: target)
        do throws(OutputError) {
            try capture.frame(of: target, size: picture) { jpeg in
                ViewFrame.write(monitor: target, picture: picture, jpeg: jpeg, into: &frameBuffer)
            }
        } catch {
            guard error.notYet else { return viewFailed(error) }
            // The first picture is on its way: its coming is damage, which captures again (or the
            // machine's retry, if it does not come), unless the machine gives it up.
            if case .giveUp(let waited) = view.notReady(size, at: now()) { return viewGivenUp(error, waited: waited) }
            armViewRetry()
            logger.debug("view: \(error.message); the frame goes when it comes")
            return
        }
        // The capture waited for replies, during which Xlib may have queued damage events that will not
        // make the descriptor readable again.
        if let desktop, desktop.hasQueuedEvents { loop.assumeIsolated().execute { self.desktopReadable() } }
        if frameOutlet?(holder.address, frameBuffer) == true {
            framesSent &+= 1
            frameBytesSent &+= UInt64(frameBuffer.count)
            logger.debug("view: frame \(framesSent) \(picture) of \(target), \(frameBuffer.count) bytes (\(frameBytesSent) in all)")
        }
    }
}
