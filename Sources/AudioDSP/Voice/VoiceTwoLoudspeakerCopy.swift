// Control side: init, deallocate. Render side: forget, push, learn (no allocation, no locks).

/// The frozen copy for two loudspeakers that play different signals: what `VoiceForegroundFilter` is
/// for one loudspeaker. SpeexDSP gives the impulse response of one loudspeaker only (its
/// `SPEEX_ECHO_GET_IMPULSE_RESPONSE` returns the first half of each of two), so the copy learns the two
/// responses itself, from the two-loudspeaker MDF's own echo estimate: a target without the talker and
/// the noise, which the MDF's adaptation has already cleaned of double talk. It learns only while the
/// kernel trusts the MDF (nobody talks, the MDF does at least as well as the copy) and stands still
/// otherwise, so that while the near end talks it still holds the MDF from before the talker.
///
/// A two-channel multidelay block frequency-domain NLMS (J.-S. Soo and K. K. Pang, IEEE Trans. ASSP
/// 38(2), 1990): a partition per frame of each loudspeaker's response, overlap-save over a window of
/// `fftSize` ≥ 2 frames, the gradient normalised per bin by the power of both channels over the whole
/// span the filters cover (the frequency-domain form of NLMS's ‖x‖²; normalised by one frame's power
/// smoothed over time, as SpeexDSP does, the step was 16 times too large at a speech onset and diverged
/// unless it was made too small to follow the MDF), and the partitions' time-domain constraint (a
/// response a frame long) applied to one partition of each channel per frame, in turn (as in SpeexDSP's
/// "alternatively updated" MDF).
public struct VoiceTwoLoudspeakerCopy {
    public let frameLength: Int
    public let fftSize: Int
    public let binCount: Int
    public let partitionCount: Int
    let fft: VoiceFFT
    /// Each channel's last `fftSize` samples, left then right.
    let windows: UnsafeMutablePointer<Float>
    /// Each channel's latest `partitionCount` window spectra (a ring: left rows, then right rows), and the
    /// filters' partitions (left, then right), split complex.
    let spectraRe: UnsafeMutablePointer<Float>
    let spectraIm: UnsafeMutablePointer<Float>
    let filterRe: UnsafeMutablePointer<Float>
    let filterIm: UnsafeMutablePointer<Float>
    var newest = 0
    /// The power per bin of both channels' spectra over the span the filters cover.
    let power: UnsafeMutablePointer<Float>
    let accumulatorRe: UnsafeMutablePointer<Float>
    let accumulatorIm: UnsafeMutablePointer<Float>
    let time: UnsafeMutablePointer<Float>
    var constrainedPartition = 0
    /// This frame's echo estimate.
    public let estimate: UnsafeMutablePointer<Float>
    /// The copy has learned from at least `minimumLearningFrames` frames, and its ring holds the
    /// reference of the latest `partitionCount` frames.
    public var hasFilter: Bool { learnedFrames >= Self.minimumLearningFrames && isPrimed }
    var learnedFrames = 0
    /// Frames pushed since the last `skip`.
    var framesPushed = 0
    var isPrimed: Bool { framesPushed >= partitionCount }
    /// Step size of the normalised update. The target has no noise, and the copy must follow an MDF that
    /// still adapts: 1 followed it best (tracking error 3 dB lower than at 0.5 after 10 s; 1.5 no
    /// better, 2 diverged).
    static let stepSize: Float = 1
    /// Frames of learning before the copy may stand in for the MDF (1 s).
    static let minimumLearningFrames = 100

    /// `filterLength`: each loudspeaker's response, in samples.
    public init(frameLength: Int, filterLength: Int) {
        precondition(frameLength > 0 && filterLength > 0)
        self.frameLength = frameLength
        var size = 4
        while size < 2 * frameLength { size *= 2 }
        fftSize = size
        binCount = size / 2 + 1
        partitionCount = (filterLength + frameLength - 1) / frameLength
        fft = VoiceFFT(size: size)
        windows = .allocate(capacity: 2 * size)
        windows.initialize(repeating: 0, count: 2 * size)
        let spectra = 2 * partitionCount * binCount
        spectraRe = .allocate(capacity: spectra)
        spectraRe.initialize(repeating: 0, count: spectra)
        spectraIm = .allocate(capacity: spectra)
        spectraIm.initialize(repeating: 0, count: spectra)
        filterRe = .allocate(capacity: spectra)
        filterRe.initialize(repeating: 0, count: spectra)
        filterIm = .allocate(capacity: spectra)
        filterIm.initialize(repeating: 0, count: spectra)
        power = .allocate(capacity: binCount)
        power.initialize(repeating: 0, count: binCount)
        accumulatorRe = .allocate(capacity: binCount)
        accumulatorRe.initialize(repeating: 0, count: binCount)
        accumulatorIm = .allocate(capacity: binCount)
        accumulatorIm.initialize(repeating: 0, count: binCount)
        time = .allocate(capacity: size)
        time.initialize(repeating: 0, count: size)
        estimate = .allocate(capacity: frameLength)
        estimate.initialize(repeating: 0, count: frameLength)
    }

    public func deallocate() {
        fft.deallocate()
        windows.deallocate()
        spectraRe.deallocate()
        spectraIm.deallocate()
        filterRe.deallocate()
        filterIm.deallocate()
        power.deallocate()
        accumulatorRe.deallocate()
        accumulatorIm.deallocate()
        time.deallocate()
        estimate.deallocate()
    }

    /// Forgets what was learned (an echo path the MDF starts afresh on).
    public mutating func forget() {
        let count = 2 * partitionCount * binCount
        for i in 0..<count {
            filterRe[i] = 0
            filterIm[i] = 0
        }
        learnedFrames = 0
    }

    /// A frame the copy does not see (the reference is folded): the ring is stale until it has been
    /// refilled.
    public mutating func skip() { framesPushed = 0 }

    /// The ring row of channel `channel` (0 left, 1 right) `age` frames before the newest.
    @inline(__always)
    func row(_ channel: Int, age: Int) -> Int {
        (channel * partitionCount + (newest + age) % partitionCount) * binCount
    }

    /// One frame of the two channels the MDF sees; computes this frame's `estimate`.
    public mutating func push(left: UnsafePointer<Float>, right: UnsafePointer<Float>) {
        let f = frameLength
        let n = fftSize
        let bins = binCount
        let partitions = partitionCount
        newest = (newest + partitions - 1) % partitions
        framesPushed = min(framesPushed + 1, partitions)
        for channel in 0..<2 {
            let window = windows + channel * n
            let x = channel == 0 ? left : right
            for i in 0..<(n - f) { window[i] = window[i + f] }
            for i in 0..<f { window[n - f + i] = x[i] }
            let r = row(channel, age: 0)
            fft.forward(window, re: spectraRe + r, im: spectraIm + r)
        }
        for k in 0..<bins {
            power[k] = 0
            accumulatorRe[k] = 0
            accumulatorIm[k] = 0
        }
        for channel in 0..<2 {
            for p in 0..<partitions {
                let s = row(channel, age: p)
                let h = (channel * partitions + p) * bins
                for k in 0..<bins {
                    let xr = spectraRe[s + k]
                    let xi = spectraIm[s + k]
                    let hr = filterRe[h + k]
                    let hi = filterIm[h + k]
                    accumulatorRe[k] += hr * xr - hi * xi
                    accumulatorIm[k] += hr * xi + hi * xr
                    power[k] += xr * xr + xi * xi
                }
            }
        }
        fft.inverse(re: accumulatorRe, im: accumulatorIm, time)
        for i in 0..<f { estimate[i] = time[n - f + i] }
    }

    /// Moves the filters towards `target`, this frame's echo as the MDF estimates it (after `push`).
    public mutating func learn(target: UnsafePointer<Float>) {
        guard isPrimed else { return }
        let f = frameLength
        let n = fftSize
        let bins = binCount
        let partitions = partitionCount
        for i in 0..<(n - f) { time[i] = 0 }
        for i in 0..<f { time[n - f + i] = target[i] - estimate[i] }
        fft.forward(time, re: accumulatorRe, im: accumulatorIm)
        // The normalised error: μ E / power, with a floor a millionth of the loudest bin's power.
        var peak: Float = 0
        for k in 0..<bins { peak = max(peak, power[k]) }
        guard peak > 0 else { return }
        let floor = 1e-6 * peak
        let scale = Self.stepSize
        for k in 0..<bins {
            let g = scale / (power[k] + floor)
            accumulatorRe[k] *= g
            accumulatorIm[k] *= g
        }
        for channel in 0..<2 {
            for p in 0..<partitions {
                let s = row(channel, age: p)
                let h = (channel * partitions + p) * bins
                for k in 0..<bins {
                    // conj(X) · E
                    let xr = spectraRe[s + k]
                    let xi = spectraIm[s + k]
                    let er = accumulatorRe[k]
                    let ei = accumulatorIm[k]
                    filterRe[h + k] += xr * er + xi * ei
                    filterIm[h + k] += xr * ei - xi * er
                }
            }
        }
        // One partition of each channel back to a response a frame long.
        let p = constrainedPartition
        constrainedPartition = (constrainedPartition + 1) % partitions
        for channel in 0..<2 {
            let h = (channel * partitions + p) * bins
            fft.inverse(re: filterRe + h, im: filterIm + h, time)
            for i in f..<n { time[i] = 0 }
            fft.forward(time, re: filterRe + h, im: filterIm + h)
        }
        learnedFrames += 1
    }
}
