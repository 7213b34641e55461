// The desktop's keymap in the pipeline: where chords are refused (`KeyGate`), for every emitter of keys.

extension TouchPipeline {
    /// The desktop's keymap changed (nil: unknown, every chord is tried): from now on every emitter of keys,
    /// the page's commands, the Slides panel and the mode's machine, refuses a chord with a key it lacks.
    public mutating func setKeymap(_ keymap: Keymap?) {
        gate.setKeymap(keymap)
        active.setKeymap(keymap)
    }

    /// Gathers the chords the machine refused into `gate`, after those of the commands and the Slides
    /// panel: the caller reads them there, in order, and clears them.
    mutating func collectRefusals() { active.moveRefusals(to: &gate) }
}
