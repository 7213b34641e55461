// One error type for the rig: its description is what a failing test shows, so it carries the
// context (what was expected, what was observed, the tails of the child processes' output).
struct RigError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
