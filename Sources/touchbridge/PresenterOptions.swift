import ArgumentParser
import TouchCore
import TouchWire

/// The options of presenter mode: `Setting.all` reads them into `ServeSettings.presenter` over the defaults
/// and the config file (whose `[presenter-key]` table gives one binding per entry).
struct PresenterOptions: ParsableArguments {
    @Option(name: .customLong("presenter-key"), help: ArgumentHelp(
        "Bind a presenter action to a key chord, as ACTION=CHORD with ACTION next (one-finger tap, swipe left), previous (swipe right), blank (two-finger tap), start or end (the web page's Start show and End show buttons) (e.g. next=Right, blank=period); repeatable. Defaults: next=Page_Down, previous=Page_Up, blank=b, start=F5, end=Escape.",
        valueName: "binding"))
    var presenterKey: [String] = []

    @Flag(help: ArgumentHelp("In presenter mode, start with drawing on: each finger strokes its path on the monitor, strokes kept until a three-finger tap clears them; a two-finger long press turns drawing on and off."))
    var draw = false

    @Option(name: .customLong("impress-pin"), help: ArgumentHelp(
        "The PIN (four digits) touchbridge pairs with LibreOffice Impress's remote control by (default: one made once and kept in $XDG_STATE_HOME/touchbridge/impress-pin; touchbridge pair prints it).",
        valueName: "NNNN"))
    var impressPin: String?
}
