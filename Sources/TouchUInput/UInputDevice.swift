// One kernel input device made through uinput, and its frames: events gathered in a preallocated buffer
// and written in one `write(2)` per frame. The kinds of device (touchscreen, pen, touchpad, pointer,
// keyboard) are Devices.swift's.

/// The frame being built: events go into a preallocated buffer and leave in one `write(2)` per frame
/// (`SYN_REPORT` last), so the hot path allocates nothing.
public final class UInputDevice {
    private var file: UInputFile?
    /// A test's record of the frames the device would have written (`init(recording:)`), each ending
    /// with `SYN_REPORT`; nil for a device of the kernel's.
    private(set) var recorded: [[InputEvent]]?
    private let frame: UnsafeMutablePointer<InputEvent>
    private var count = 0
    private static let capacity = 256
    /// The name under /sys/devices/virtual/input/ (`input12`), once created.
    public let sysname: String
    /// The name the device was created with.
    public let name: String
    /// touchbridge's vendor id on every device ("tb").
    public static let vendor: UInt16 = 0x7462

    /// Opens `path`, enables the capabilities `configure` sets, sets the device up and creates it.
    init(path: String, name: String, product: UInt16, configure: (UInputFile) throws(UInputError) -> Void) throws(UInputError) {
        let file = try UInputFile(path: path)
        try configure(file)
        try file.setup(UInputSetup(name: name, bus: busVirtual, vendor: Self.vendor, product: product, version: 1))
        try file.create()
        self.file = file
        self.name = name
        sysname = (try? file.sysname()) ?? ""
        frame = .allocate(capacity: Self.capacity)
    }

    /// A device that only records its frames, with no /dev/uinput (TouchUInputTests): what the devices
    /// below emit, frame by frame, without a kernel.
    init(recording name: String) {
        self.name = name
        sysname = ""
        recorded = []
        frame = .allocate(capacity: Self.capacity)
    }

    deinit {
        close()
        frame.deallocate()
    }

    /// Destroys the device (`UI_DEV_DESTROY`) and closes the descriptor. Idempotent.
    public func close() {
        guard let file else { return }
        try? file.destroy()
        self.file = nil
    }

    /// Destroys the kernel device (`UI_DEV_DESTROY`) but keeps the descriptor open, so that every later
    /// frame's write fails (EINVAL: on a descriptor without a device the kernel takes a write as the
    /// legacy setup). For the VM test of a device failing in the middle of a batch (uinput-drive's
    /// `be break`); the daemon never calls it.
    public func destroyKeepingDescriptor() throws(UInputError) {
        try file?.destroy()
    }

    /// Appends one event to the frame (a full frame is written out first).
    public func emit(_ type: UInt16, _ code: UInt16, _ value: Int32) throws(UInputError) {
        if count == Self.capacity - 1 { try sync() }
        frame[count] = InputEvent(type: type, code: code, value: value)
        count += 1
    }

    /// Ends the frame with `SYN_REPORT` and writes it.
    public func sync() throws(UInputError) {
        guard let file else {
            if recorded != nil {
                frame[count] = InputEvent(type: EV.syn, code: SYN.report, value: 0)
                recorded!.append(Array(UnsafeBufferPointer(start: frame, count: count + 1)))
            }
            count = 0
            return
        }
        frame[count] = InputEvent(type: EV.syn, code: SYN.report, value: 0)
        count += 1
        defer { count = 0 }
        try file.write(frame, count: count)
    }
}
