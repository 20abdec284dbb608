// OSC thread (a pure value). Whether other audio is playing, from the peaks the host's monitor port
// heard: audible once every peak stays above −60 dBFS for 200 ms, silent again after 1 s below.

/// AVAudioSession's `isOtherAudioPlaying` and the secondary-audio hint, from monitor peaks.
public struct OtherAudioDetector: Sendable, Equatable {
    /// −60 dBFS.
    public static let threshold: Float = 0.001
    public static let onsetSeconds = 0.2
    public static let releaseSeconds = 1.0

    public private(set) var isPlaying = false
    /// Since when the peaks have been on the other side of the threshold (nil: they agree with the state).
    private var changingSince: Double?

    public init() {}

    /// Takes the peak heard since the last call, at `now` (seconds); returns the new state when it changed.
    public mutating func update(peak: Float, now: Double) -> Bool? {
        let loud = peak > Self.threshold
        guard loud != isPlaying else {
            changingSince = nil
            return nil
        }
        let since = changingSince ?? now
        changingSince = since
        if now - since >= (loud ? Self.onsetSeconds : Self.releaseSeconds) {
            isPlaying = loud
            changingSince = nil
            return loud
        }
        return nil
    }
}
