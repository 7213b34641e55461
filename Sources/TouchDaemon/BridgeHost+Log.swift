import Logging
import NIOCore
import TouchCore
import TouchImpress
import TouchNet
import TouchOutput
import TouchWire

// The host's log lines: the Bridge's events worded, the outputs' failures and the X server's protocol
// errors, each bounded.

extension BridgeHost {
    /// Words one event of the Bridge.
    func log(_ event: BridgeEvent) {
        switch event {
        case .senderConnected(let source, let transport, let report):
            logger.info("phone connected from \(source)\(transport == .poseAI ? "" : " (\(transport))")\(report.countsSuffix)")
        case .refusedBusy(let source, let transport, let report):
            logger.notice("ignoring \(source) (\(transport)): another phone is connected (it may take over after 10 s of silence)\(report.countsSuffix)")
        case .senderSilent(let interval, let report):
            logger.info("phone silent for \(interval): released everything\(report.countsSuffix)")
        case .sourceGone(let source, let report):
            logger.info("web page from \(source) gone: released everything\(report.countsSuffix)")
        case .modeChanged(let kind, let source, let report):
            logger.info("web page: \(kind.rawValue) mode (from \(source))\(report.countsSuffix)")
        case .modeRestored(let kind, let report):
            logger.info("\(kind.rawValue) mode again: the page that chose another no longer holds the session\(report.countsSuffix)")
        case .surface(let width, let height, let surface, let report):
            logger.info("web page surface \(Int(width))x\(Int(height)) CSS px: \(surface)\(report.countsSuffix)")
        case .targetChanged(let target):
            logger.info("monitors changed: mapping onto \(target)")
        case .monitorMissing(let choice, let names, let target):
            logger.warning("no monitor named \"\(choice)\" (monitors: \(names.isEmpty ? "none" : names.joined(separator: ", "))); using \(target) until it appears")
        case .transition(let t, let report):
            logger.debug("\(t)\(report.countsSuffix)")
        case .chordRefused(let keysym, let report):
            logger.notice("refused a key chord: no key on the desktop's keyboard layout makes \(KeyNames.name(of: keysym)) (nothing was pressed)\(report.countsSuffix)")
        case .personJoined(let person, let sender, let report):
            logger.info("\(person): \(sender)\(person == .first ? " drives the pointer" : ", with a pointer of their own")\(report.countsSuffix)")
        case .personLeft(let person, let sender, let why, let report):
            logger.info("\(person) (\(sender)) left: \(why.rawValue); released what they held\(report.countsSuffix)")
        case .smoothing(let r):
            if r.engaged {
                logger.debug("smoothing engaged: packets arrive in bursts (jitter \(r.jitter) over a \(r.period) send period); moves play out \(r.delay) behind on a 120 Hz tick")
            } else {
                logger.debug("smoothing off again: packets arrive evenly (jitter \(r.jitter) over a \(r.period) send period)")
            }
        }
    }

    /// One failure of an output or the desktop: logged, bounded per kind.
    func logOutput(_ error: OutputError) {
        guard let report = outputErrorsLogged.record(reasonIndex: error.kind, at: now()) else { return }
        logger.error("\(error)\(report.countsSuffix)")
    }

    func logProtocolErrors() {
        guard let desktop else { return }
        let (errors, dropped) = desktop.takeErrors()
        for error in errors { logOutput(error) }
        if dropped > 0 { logger.error("\(dropped) more errors from \(desktop) not shown") }
    }

    func injectXError() {
        packetsSinceXError += 1
        guard packetsSinceXError >= debugXErrorEvery, let desktop else { return }
        packetsSinceXError = 0
        do throws(OutputError) { try desktop.provokeError() } catch { logOutput(error) }
    }
}
