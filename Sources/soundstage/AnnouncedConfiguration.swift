import OSCControl

/// The rate and period `/engine/config` last told subscribers. A server that returns at another rate and
/// period brings both changes at once, and each would announce the same pair: only a pair that differs
/// from the last one goes out.
struct AnnouncedConfiguration {
    private(set) var rate: Int
    private(set) var frames: Int

    init(rate: Int, frames: Int) {
        self.rate = rate
        self.frames = frames
    }

    /// Whether `(rate, frames)` is news; remembers it when it is.
    mutating func take(rate: Int, frames: Int) -> Bool {
        guard rate != self.rate || frames != self.frames else { return false }
        self.rate = rate
        self.frames = frames
        return true
    }

    /// Posts `/engine/config` when `(rate, frames)` is news.
    mutating func post(rate: Int, frames: Int, to osc: OSCService) {
        if take(rate: rate, frames: frames) { osc.post(.configurationChanged(sampleRate: rate, bufferSize: frames)) }
    }
}
