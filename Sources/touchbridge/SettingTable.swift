import ArgumentParser
import Logging
import TouchCore
import TouchDaemon
import TouchFiles
import TouchImpress
import TouchOutput

// The one table of settings: every setting of `serve`, in `--help`'s order.

extension Setting {
    /// Every setting of `serve`, in `--help`'s order: the one table the file, the command line and
    /// `config --print` go by. (`--config` and the hidden `--debug-*` options are not settings.)
    static var all: [Setting] {
        let port = 0...65535
        return [
            optionalText("display", \.display, example: "\":0\"", unset: "the DISPLAY environment variable",
                         commandLine: \.display),
            integer("udp-port", \.udpPort, in: port, commandLine: \.udpPort.commandLine),
            integer("tuio-port", \.tuioPort, in: port, commandLine: \.tuioPort.commandLine),
            integer("http-port", \.httpPort, in: port, commandLine: \.httpPort.commandLine),
            flag("new-secret", \.newSecret, commandLine: { $0.newSecret ? true : nil }),
            optionalText("tls-cert", \.tlsCert, example: "\"/path/cert.pem\"", unset: "plain HTTP", commandLine: \.tlsCert),
            optionalText("tls-key", \.tlsKey, example: "\"/path/key.pem\"", unset: "plain HTTP", commandLine: \.tlsKey),
            value("bind", \.bind, parse: Parse.address, commandLine: { serve throws(SettingError) in
                try serve.bind.commandLine.map(Parse.address)
            }, show: quoted),
            list("allow", \.allow, parse: Parse.allow, commandLine: \.allow, show: { quoted($0.description) },
                 emptyNote: "empty: loopback, link-local and private ranges"),
            choice("mode", \.mode, commandLine: \.mode.commandLine),
            value("monitor", \.monitor, parse: Parse.monitor, commandLine: { serve throws(SettingError) in
                try serve.monitor.commandLine.map(Parse.monitor)
            }, show: { quoted($0.description) }),
            choice("fit", \.fit, commandLine: \.fit.commandLine),
            choice("orientation", \.orientation, commandLine: \.orientation.commandLine),
            value("surface-aspect", section: .touchpad, \.surfaceAspect, parse: Parse.surfaceAspect,
                  commandLine: { serve throws(SettingError) in try serve.surfaceAspect.map(Parse.surfaceAspect) },
                  show: { quoted($0.description) }),
            flag("multitouch", \.multitouch, commandLine: { $0.multitouch ? true : nil }),
            integer("people", \.people, in: 1...Person.most, commandLine: \.people.commandLine),
            choice("backend", \.backend, commandLine: \.backend.commandLine),
            choice("uinput-touchpad", \.uinputTouchpad, commandLine: \.uinputTouchpad.commandLine),
            choice("sway-seats", \.swaySeats, commandLine: \.swaySeats.commandLine),
            flag("show-touches", \.showTouches, commandLine: { $0.showTouches ? true : nil }),
            integer("idle-release-ms", \.idleReleaseMs, in: 50...60_000, commandLine: \.idleReleaseMs.commandLine),
            flag("reconnect", \.reconnect, commandLine: { $0.reconnect ? true : nil }),
            flag("view", \.view, commandLine: \.view),
            integer("max-packets-per-second", \.maxPacketsPerSecond, in: 0...Int.max,
                    commandLine: \.maxPacketsPerSecond.commandLine),
            integer("max-bytes-per-second", \.maxBytesPerSecond, in: 0...Int.max,
                    commandLine: \.maxBytesPerSecond.commandLine),
            choice("log-level", \.logLevel, commandLine: \.logLevel.commandLine),
            number("surface-diagonal-mm", \.surfaceDiagonalMM, in: 20...1000, commandLine: \.touchpad.surfaceDiagonalMM),
            choice("accel", section: .touchpad, \.touchpad.accelProfile, commandLine: \.touchpad.accel),
            number("speed", \.touchpad.speed, in: -1...1, commandLine: \.touchpad.speed),
            choice("smoothing", section: .touchpad, \.touchpad.smoothing, commandLine: \.touchpad.smoothing),
            flag("tap", section: .touchpad, \.touchpad.tapToClick, commandLine: \.touchpad.tap),
            flag("drag-lock", section: .touchpad, \.touchpad.dragLock, commandLine: \.touchpad.dragLock),
            flag("natural-scroll", section: .touchpad, \.touchpad.naturalScroll, commandLine: \.touchpad.naturalScroll),
            number("scroll-speed", \.touchpad.scrollSpeed, in: 0.1...10, commandLine: \.touchpad.scrollSpeed),
            flag("kinetic-scroll", section: .touchpad, \.touchpad.kineticScroll, commandLine: \.touchpad.kineticScroll),
            bindings("swipe", section: .touchpad, names: [3, 4].flatMap { n in SwipeDirection.allCases.map { "\(n)-\($0.rawValue)" } },
                     bind: Parse.swipe, chord: { settings, name in
                         let fingers = name.hasPrefix("3") ? 3 : 4
                         let direction = SwipeDirection(rawValue: String(name.dropFirst(2)))!
                         return settings.touchpad.swipes.chord(fingers: fingers, direction: direction)
                     }, commandLine: \.touchpad.swipe),
            bindings("presenter-key", section: .presenter, names: PresenterBindings.names, bind: Parse.presenterKey,
                     chord: { settings, name in settings.presenter.keys[name] ?? .none }, commandLine: \.presenter.presenterKey),
            flag("draw", section: .presenter, \.presenter.drawing, commandLine: { $0.presenter.draw ? true : nil }),
            optionalText("impress-pin", section: .presenter, \.impressPin, example: "\"0427\"",
                         unset: "the PIN kept in $XDG_STATE_HOME/touchbridge/impress-pin", commandLine: \.presenter.impressPin,
                         check: { ImpressPIN(parsing: $0) == nil ? "\"\($0)\" is not a PIN: four digits, such as 0427" : nil }),
        ]
    }
}
