// Control side (the thread calling `Engine.poll()`). Peak and RMS of the samples a recorder takes,
// folded into dBFS values when the owner asks (AVAudioRecorder's `updateMeters()`).
#if canImport(Glibc)
    import Glibc
#endif

/// Per-channel level accumulator for a recording.
struct RecorderMeter {
    /// Silence, and the floor of every reading, in dBFS.
    static let floorDecibels: Float = -160

    private var peaks: [Float]
    private var sumSquares: [Double]
    private var frames = 0
    private(set) var peakDecibels: [Float]
    private(set) var averageDecibels: [Float]

    init(channelCount: Int) {
        peaks = Array(repeating: 0, count: channelCount)
        sumSquares = Array(repeating: 0, count: channelCount)
        peakDecibels = Array(repeating: Self.floorDecibels, count: channelCount)
        averageDecibels = Array(repeating: Self.floorDecibels, count: channelCount)
    }

    /// Adds the first `frames` frames of each channel. Cost: one pass over the samples.
    mutating func accumulate(_ channels: [[Float]], frames: Int) {
        for (index, channel) in channels.enumerated() where index < peaks.count {
            var peak = peaks[index]
            var sum = 0.0
            channel.withUnsafeBufferPointer { samples in
                for frame in 0..<min(frames, samples.count) {
                    let x = samples[frame]
                    peak = max(peak, abs(x))
                    sum += Double(x) * Double(x)
                }
            }
            peaks[index] = peak
            sumSquares[index] += sum
        }
        self.frames += frames
    }

    /// Turns what was accumulated since the last call into readings: peak = largest |sample|,
    /// average = RMS over the interval, both as 20·log10 in dBFS within −160…0 (a full-scale sine
    /// reads 0 dB peak and −3.01 dB average; anything louder reads 0). With nothing accumulated the
    /// readings stay as they were, so calling this faster than audio arrives does not flicker.
    mutating func update() {
        guard frames > 0 else { return }
        for index in peaks.indices {
            peakDecibels[index] = Self.decibels(Double(peaks[index]))
            averageDecibels[index] = Self.decibels((sumSquares[index] / Double(frames)).squareRoot())
            peaks[index] = 0
            sumSquares[index] = 0
        }
        frames = 0
    }

    /// Forgets everything: readings go to −160 dBFS.
    mutating func reset() {
        self = RecorderMeter(channelCount: peaks.count)
    }

    /// 20·log10(amplitude), clamped to −160…0 dBFS.
    static func decibels(_ amplitude: Double) -> Float {
        amplitude > 1e-8 ? min(0, max(floorDecibels, Float(20 * log10(amplitude)))) : floorDecibels
    }
}
