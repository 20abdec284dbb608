// Control side: init, deallocate. Render side: skip, push, learn (no allocation, no locks).

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
/// "alternatively updated" MDF). Each loudspeaker's filter is a `PartitionedConvolution`.
public struct VoiceTwoLoudspeakerCopy {
    public let frameLength: Int
    /// Each loudspeaker's response, partitioned.
    var filters: (PartitionedConvolution, PartitionedConvolution)
    public var fftSize: Int { filters.0.fftSize }
    public var binCount: Int { filters.0.binCount }
    public var partitionCount: Int { filters.0.partitionCount }
    /// Each channel's last `fftSize` samples, left then right.
    let windows: UnsafeMutablePointer<Float>
    /// Each channel's latest `partitionCount` window spectra, split complex: rings (see
    /// `PartitionedConvolution.apply`) of the left channel, then of the right.
    let spectraRe: UnsafeMutablePointer<Float>
    let spectraIm: UnsafeMutablePointer<Float>
    var newest = 0
    /// The power per bin of both channels' spectra over the span the filters cover.
    let power: UnsafeMutablePointer<Float>
    let accumulatorRe: UnsafeMutablePointer<Float>
    let accumulatorIm: UnsafeMutablePointer<Float>
    var constrainedPartition = 0
    /// This frame's echo estimate, and the error against the latest target.
    public let estimate: UnsafeMutablePointer<Float>
    let error: UnsafeMutablePointer<Float>
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
        filters = (
            PartitionedConvolution(frameLength: frameLength, filterLength: filterLength),
            PartitionedConvolution(frameLength: frameLength, filterLength: filterLength)
        )
        let size = filters.0.fftSize
        let bins = filters.0.binCount
        windows = .allocate(capacity: 2 * size)
        windows.initialize(repeating: 0, count: 2 * size)
        let spectra = 2 * filters.0.partitionCount * bins
        spectraRe = .allocate(capacity: spectra)
        spectraRe.initialize(repeating: 0, count: spectra)
        spectraIm = .allocate(capacity: spectra)
        spectraIm.initialize(repeating: 0, count: spectra)
        power = .allocate(capacity: bins)
        power.initialize(repeating: 0, count: bins)
        accumulatorRe = .allocate(capacity: bins)
        accumulatorRe.initialize(repeating: 0, count: bins)
        accumulatorIm = .allocate(capacity: bins)
        accumulatorIm.initialize(repeating: 0, count: bins)
        estimate = .allocate(capacity: frameLength)
        estimate.initialize(repeating: 0, count: frameLength)
        error = .allocate(capacity: frameLength)
        error.initialize(repeating: 0, count: frameLength)
    }

    public func deallocate() {
        filters.0.deallocate()
        filters.1.deallocate()
        windows.deallocate()
        spectraRe.deallocate()
        spectraIm.deallocate()
        power.deallocate()
        accumulatorRe.deallocate()
        accumulatorIm.deallocate()
        estimate.deallocate()
        error.deallocate()
    }

    /// A frame the copy does not see (the reference is folded): the ring is stale until it has been
    /// refilled.
    public mutating func skip() { framesPushed = 0 }

    /// Loudspeaker `channel`'s response moved `frames` frames earlier, for a channel the kernel now delays
    /// by as many frames. The ring still holds the channel undelayed: `skip` it.
    public mutating func advance(_ channel: Int, byFrames frames: Int) {
        if channel == 0 { filters.0.advance(byFrames: frames) } else { filters.1.advance(byFrames: frames) }
    }

    /// Channel `channel`'s ring (0 left, 1 right).
    @inline(__always)
    func ring(_ channel: Int) -> (re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        let offset = channel * partitionCount * binCount
        return (spectraRe + offset, spectraIm + offset)
    }

    /// Adds `sign` (±1) times the power of row `row` of channel `channel`'s ring to `power`.
    @inline(__always)
    func addPower(_ channel: Int, row: Int, times sign: Float) {
        let r = ring(channel)
        let s = row * binCount
        for k in 0..<binCount { power[k] += sign * (r.re[s + k] * r.re[s + k] + r.im[s + k] * r.im[s + k]) }
    }

    /// One frame of the two channels the MDF sees; computes this frame's `estimate`.
    public mutating func push(left: UnsafePointer<Float>, right: UnsafePointer<Float>) {
        let bins = binCount
        let partitions = partitionCount
        newest = (newest + partitions - 1) % partitions
        framesPushed = min(framesPushed + 1, partitions)
        // The power over the span: the row about to be overwritten (the oldest) out, the new one in. Once
        // per turn of the ring it is summed again whole, so that rounding cannot pile up.
        let resums = newest == 0
        for channel in 0..<2 {
            let r = ring(channel)
            if !resums { addPower(channel, row: newest, times: -1) }
            filters.0.slide(
                windows + channel * fftSize, by: channel == 0 ? left : right, ringRe: r.re, ringIm: r.im, row: newest)
            if !resums { addPower(channel, row: newest, times: 1) }
        }
        for k in 0..<bins {
            accumulatorRe[k] = 0
            accumulatorIm[k] = 0
        }
        if resums {
            for k in 0..<bins { power[k] = 0 }
            for channel in 0..<2 {
                for row in 0..<partitions { addPower(channel, row: row, times: 1) }
            }
        } else {
            for k in 0..<bins { power[k] = max(0, power[k]) }
        }
        let l = ring(0)
        let r = ring(1)
        filters.0.accumulate(ringRe: l.re, ringIm: l.im, newest: newest, intoRe: accumulatorRe, intoIm: accumulatorIm)
        filters.1.accumulate(ringRe: r.re, ringIm: r.im, newest: newest, intoRe: accumulatorRe, intoIm: accumulatorIm)
        filters.0.inverse(accumulatorRe, accumulatorIm, into: estimate)
    }

    /// Moves the filters towards `target`, this frame's echo as the MDF estimates it (after `push`).
    public mutating func learn(target: UnsafePointer<Float>) {
        guard isPrimed else { return }
        let f = frameLength
        let bins = binCount
        for i in 0..<f { error[i] = target[i] - estimate[i] }
        filters.0.errorSpectrum(error, re: accumulatorRe, im: accumulatorIm)
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
        let l = ring(0)
        let r = ring(1)
        filters.0.adapt(ringRe: l.re, ringIm: l.im, newest: newest, errorRe: accumulatorRe, errorIm: accumulatorIm)
        filters.1.adapt(ringRe: r.re, ringIm: r.im, newest: newest, errorRe: accumulatorRe, errorIm: accumulatorIm)
        // One partition of each channel back to a response a frame long.
        filters.0.constrain(partition: constrainedPartition)
        filters.1.constrain(partition: constrainedPartition)
        constrainedPartition = (constrainedPartition + 1) % partitionCount
        learnedFrames += 1
    }
}
