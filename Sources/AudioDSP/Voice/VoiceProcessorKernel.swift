// Control side: init, deinit. Render side (one thread at a time): process, analysis.
// Any thread: setAGC, setNoiseSuppression, publishedAnalysis (atomics, relaxed).
import CSpeexDSP
import Synchronization

/// Echo cancellation for a voice path: the microphone minus the echo of what the loudspeakers play.
///
/// Per 10 ms frame:
/// 1. `EchoDelayEstimator` tracks the bulk delay from the reference to the microphone (GCC-PHAT,
///    0 … `maximumDelaySeconds`), and a delay line re-aligns the reference so that the echo's direct
///    path falls `alignmentMargin` (5 ms) into the linear filter. A new delay is applied when it
///    differs from the current one by more than 2 ms; the filter then still fits the room. Two
///    loudspeakers playing different signals keep the nearer one's delay (`loudspeakerDelays`).
/// 2. SpeexDSP's multidelay block frequency-domain adaptive filter (MDF; J.-M. Valin, IEEE Trans. ASLP
///    15(3), 2007) cancels the linear echo with a filter of 155 ms (quality) or 45 ms
///    (lowComplexity) after the aligned reference, all reference channels against each microphone; two
///    reference channels that carry one signal are cancelled as one (`referenceFolded`).
/// 3. `ResidualEchoSuppressor` removes what is left (leakage, loudspeaker distortion, the unconverged
///    start) and, when enabled, the noise; half a frame of latency (a low-delay STFT with 5 ms hops).
/// 4. `VoiceNotchCompensation` gives the talker back the low end SpeexDSP's DC notch took, while the
///    near end talks.
/// 5. `VoiceAGC`, when enabled, brings the near-end talker to −26 dBFS.
///
/// Latency: `latencyFrames` = half a frame (5 ms). Allocation happens in `init` only: SpeexDSP's
/// `speex_echo_cancellation` works in its state's buffers (it allocates in `speex_echo_state_init_mc`
/// only), and so does everything in Swift here.
public final class VoiceProcessorKernel {
    public let settings: VoiceProcessorSettings
    /// Samples per channel per `process` call: 10 ms (`sampleRate / 100`, rounded down to an even count).
    public let frameLength: Int
    /// The delay the kernel adds, in samples: half a frame (the suppressor's hop).
    public let latencyFrames: Int
    /// Where the echo's direct path is placed in the linear filter, in samples (5 ms).
    public let alignmentMargin: Int
    /// A new delay estimate moves the delay line when it differs by more than this (2 ms).
    var realignmentThreshold: Int { 2 * alignmentMargin / 5 }
    /// The linear filter's length in samples.
    public let filterLength: Int

    let echoState: OpaquePointer
    /// A one-loudspeaker MDF for a two-channel reference that carries one signal: one channel is the
    /// other times a gain (a mono source on two loudspeakers, panned or not), or silent (the other port
    /// left unconnected). The two-channel MDF would solve a problem with no unique solution, or model a
    /// silent loudspeaker, and has no impulse response to copy. `nil` with one reference channel.
    let foldedEchoState: OpaquePointer?
    /// The two reference channels carry one signal and `foldedEchoState` cancels it, from the louder
    /// channel (`foldDirection`; the echo of both loudspeakers is then one room response to it).
    /// Decided on each incoming frame with far-end sound (before the delay line, so a change reaches the
    /// MDF no earlier than the decision): a frame in which the other channel is not `foldGain` times the
    /// folded one (`explains`) switches to the two-channel MDF at once; `foldingReturnSeconds` of frames
    /// that one channel and gain explain fold again. Starts folded, its channel and gain taken from the
    /// first frame with far-end sound: a two-channel signal unfolds there.
    var referenceFolded: Bool
    /// The channel the folded MDF takes, `foldLeft` or `foldRight`; `foldUnknown` before the first
    /// far-end sound and while unfolded.
    var foldDirection = VoiceProcessorKernel.foldUnknown
    /// The other channel over the folded one: 1 for one signal on both, 0 for one channel only.
    var foldGain = 0.0
    /// The channel and gain the folded MDF last cancelled (its filter models that loudspeaker, or the
    /// pair with that gain).
    var foldedModelDirection = VoiceProcessorKernel.foldUnknown
    var foldedModelGain = 0.0
    static let foldUnknown = -1
    static let foldLeft = 1
    static let foldRight = 2
    var foldCandidate = VoiceProcessorKernel.foldUnknown
    var candidateGain = 0.0
    var foldingRun = 0
    let foldingReturnFrames: Int
    /// The channels' weights in the one-channel mix (delay tracking, spectra, the folded MDF): the mean,
    /// or the folded channel alone.
    var leftWeight: Float { foldDirection == Self.foldLeft ? 1 : foldDirection == Self.foldRight ? 0 : 0.5 }
    var rightWeight: Float { foldDirection == Self.foldLeft ? 0 : foldDirection == Self.foldRight ? 1 : 0.5 }
    /// A fold onto the same channel with a gain this much away from the model's starts the folded MDF
    /// afresh: its filter models the two rooms mixed with the old gain.
    static let foldingModelGainChange = 0.1
    static let foldingSideRatio = 1e-5
    static let foldingReturnSeconds = 2.0
    let foldedInterleaved: UnsafeMutablePointer<Int16>
    var estimator: EchoDelayEstimator
    /// Each reference channel's own delay (quality mode, two reference channels): which loudspeaker is
    /// the farther one (`VoiceProcessorKernel+ChannelShift.swift`).
    var leftEstimator: EchoDelayEstimator?
    var rightEstimator: EchoDelayEstimator?
    /// The channels' trackers run only while a shift may be made, and start afresh each time.
    var channelEstimatorsRun = false
    var suppressors: UnsafeMutablePointer<ResidualEchoSuppressor>
    var agcState: VoiceAGC
    let agcSwitch: Atomic<Bool>
    let noiseSwitch: Atomic<Bool>
    let publishedErle = Atomic<UInt32>(0)
    let publishedDelay = Atomic<UInt32>(Float(-1).bitPattern)
    let publishedFlags = Atomic<UInt8>(0)

    // Reference delay line, one ring per reference channel.
    let ringLength: Int
    let rings: UnsafeMutablePointer<Float>
    var ringWrite = 0
    var lineDelay = 0
    let maximumLineDelay: Int
    // Frame buffers.
    let monoReference: UnsafeMutablePointer<Float>
    let monoMic: UnsafeMutablePointer<Float>
    let alignedMono: UnsafeMutablePointer<Float>
    let micInterleaved: UnsafeMutablePointer<Int16>
    let referenceInterleaved: UnsafeMutablePointer<Int16>
    let outputInterleaved: UnsafeMutablePointer<Int16>
    let errorFrame: UnsafeMutablePointer<Float>
    let echoFrame: UnsafeMutablePointer<Float>
    // Reference power spectra: the latest `historyLength` frames, and their per-bin peak.
    let referenceFFT: VoiceFFT
    let referenceWindow: UnsafeMutablePointer<Float>
    let referenceInput: UnsafeMutablePointer<Float>
    let referenceTime: UnsafeMutablePointer<Float>
    let referenceRe: UnsafeMutablePointer<Float>
    let referenceIm: UnsafeMutablePointer<Float>
    let binCount: Int
    let historyLength: Int
    let history: UnsafeMutablePointer<Float>
    var historyIndex = 0
    let referencePeak: UnsafeMutablePointer<Float>
    // Convergence and activity.
    /// The linear filter counts as converged once its own ERLE over far-end single talk passes this
    /// (or `convergenceLimitFrames` after an alignment); until then the suppressor holds the echo down
    /// with the reference's peak power. At 15 dB the regressions learned a filter still moving and
    /// far-end bursts of new spectral content leaked through (docs/DECISIONS.md).
    static let convergedErleDb: Float = 25
    /// The longest unconverged span, in 10 ms frames (10 s; 20 s for two loudspeakers that play
    /// different signals, whose MDF reached 16 dB after 10 s on `VoiceSceneTests`' two-loudspeaker scene
    /// and 25 dB after 15 s): a room the filter cannot model to `convergedErleDb` (distortion, noise) is
    /// left to the regressions after it.
    static let convergenceLimitFrames = 1000
    /// Frames (0.3 s) after an alignment during which an unconverged MDF's suppressor bounds the echo by
    /// the reference's peak over every delay, not only the 40 ms after the line's (docs/DECISIONS.md).
    static let wideSpanFrames = 30
    var converged = false
    /// Successive frames the MDF's ERLE has been above `convergedErleDb` (while not converged).
    var convergedRun = 0
    /// After a channel's shift (`VoiceProcessorKernel+ChannelShift.swift`) the MDF must stay above
    /// `convergedErleDb` this long (0.5 s) to count as converged: started again on two loudspeakers it
    /// hovers about that line for seconds, and declared converged at the first moment above it, the
    /// suppressor let the echo through for the next seconds (far-end ERLE 37.7 dB instead of 54.0 on a
    /// 16 kHz scene, docs/DECISIONS.md).
    static let twoLoudspeakerConvergedFrames = 50
    /// A delay estimate has been applied to the delay line.
    var isAligned = false
    /// Two loudspeakers at different distances that play different signals (an unfolded two-channel
    /// reference) show the tracker, which hears their mix, one delay or the other, whichever carries
    /// more; each move would re-align the filter and send it back to the start. The delay line then
    /// takes the earlier of the two delays last seen (`loudspeakerDelays`, see
    /// `nearerLoudspeakerDelay`), which the filter covers with the other while they are at most
    /// `widestLoudspeakerSpread` apart: 60 ms of the 155 ms filter in quality mode, 20 ms of the 45 ms
    /// in low-complexity mode. A second delay more than `loudspeakerSpread` (20 ms) from the first
    /// counts once the first is heard again after it, or at once when the tracker shows it as a peak
    /// before the delay it heads (`EchoDelayEstimator.earlierPeakSamples`; docs/DECISIONS.md).
    var loudspeakerDelays = (-1.0, -1.0)
    var loudspeakerDelayFrames = (0, 0)
    /// Both delays are loudspeakers' (close enough, or seen in turn); else the line follows the latest.
    var loudspeakersConfirmed = false
    var latestLoudspeaker = 0
    /// The farther loudspeaker's channel (0 left, 1 right; −1 none) and how many whole frames it is
    /// delayed by beyond the line, so that both rooms start at the filter's start
    /// (`VoiceProcessorKernel+ChannelShift.swift`).
    var farChannel = -1
    var channelShiftFrames = 0
    /// Off only in tests, to hear the difference a shift makes.
    var allowsChannelShift = true
    let longestChannelShiftFrames: Int
    let nearerLoudspeakerMemoryFrames: Int
    let loudspeakerSpread: Int
    let widestLoudspeakerSpread: Int
    /// A loudspeaker's delay not seen for this long is forgotten.
    static let nearerLoudspeakerMemorySeconds = 30.0
    var framesSinceAlignment = 0
    var framesProcessed = 0
    var micPowerMean: Float = 0
    var errorPowerMean: Float = 0
    var outputPowerMean: Float = 0
    var farEndHangover = 0
    var nearEndHangover = 0
    /// The latest frame's near end stood clearly above the interference (`clearTalkerExcess`): the next
    /// frame is suppressed more gently (`ResidualEchoSuppressor.clearTalkerOverSubtraction`).
    var clearTalker = false
    /// Excess over the interference (noise and residual echo estimate) that marks a clear talker. The
    /// detector's false detections, where a far-end burst leaves the filter behind, measured 2–15×; a
    /// talker in double talk has a median of 70–190× (docs/DECISIONS.md).
    static let clearTalkerExcess: Float = 10
    /// A quiet talker (quality mode): the microphone's coherence with the echo estimate stays high for a
    /// talker well below the echo, but the error, once the filter has converged, is then mostly the
    /// talker, which the echo estimate does not explain. An excess of 2× the interference on
    /// `quietTalkerFrames` frames in a row whose error the echo estimate explains less than
    /// `quietTalkerCoherence` of counts as the near end. A far-end burst that leaves the filter behind
    /// looks the same for a frame or two, seldom for three (docs/DECISIONS.md).
    static let quietTalkerCoherence: Float = 0.25
    /// The AGC measures the talker on frames the detector itself marks (not its hangover), while the far
    /// end is silent, that stand this far above the interference (noise and residual echo estimate; 4×:
    /// 6 dB), once the noise estimate has had `agcSettleSeconds` to learn the room. Without these, the
    /// residue after the far end's words and the room noise were measured as a quiet talker and raised
    /// by up to 30 dB.
    static let agcSpeechExcess: Float = 4
    static let agcSettleSeconds = 1.0
    static let quietTalkerFrames = 3
    var quietTalkerRun = 0
    let agcSettleFrames: Int
    var current = VoiceAnalysis()
    /// The loudspeaker's distortion, learned and put into the reference before the MDF (quality mode,
    /// one reference channel or two folded into one: SpeexDSP gives its impulse response for one
    /// loudspeaker only).
    var distortion: NonlinearEchoCanceller
    let learnsDistortion: Bool
    /// The distortion is learned only while the MDF's own ERLE over far-end talk is at least this: on
    /// the output of a filter that does not model the room yet (a long echo delay, found late), the
    /// regression reads the linear echo as distortion, the coefficients grow to hundreds on a linear
    /// loudspeaker, and the MDF then has that distortion's echo to model as well (docs/DECISIONS.md).
    static let distortionLearningErleDb: Float = 3
    /// Nor while that ERLE is more than this below its recent best (`linearErlePeak`, which decays by
    /// `linearErlePeakDecayDbPerSecond`): a talker the detector has not marked yet, or an echo path that
    /// changed, is in the MDF's output then, and would be read as distortion.
    static let distortionLearningDropDb: Float = 10
    static let linearErlePeakDecayDbPerSecond = 1.0
    /// The MDF's ERLE over far-end single talk (microphone over its error, both smoothed), in dB, and its
    /// decaying peak.
    var linearErleDb: Float = 0
    var linearErlePeak: Float = 0
    let linearErlePeakDecay: Float
    /// The MDF's impulse response as SpeexDSP gives it (32767 · N per unit in the float build, N its
    /// window of two frames), fetched every `impulseResponseInterval` frames.
    let impulseResponse: UnsafeMutablePointer<Int32>
    let impulseResponseLength: Int
    static let impulseResponseInterval = 20
    let preprocessedReference: UnsafeMutablePointer<Float>
    /// A frozen copy of the MDF, taken while nobody talks and the MDF does at least as well as the copy:
    /// the running mean of those snapshots (`foregroundAveraging` per snapshot), which averages out the
    /// MDF's gradient noise (after a change of echo path the snapshots pull it over within a second or
    /// two, and meanwhile the MDF's error is the smaller).
    /// The first microphone's error is the copy's while its smoothed power is below `foregroundMargin`
    /// times the MDF's (after loud double talk pulled the MDF off), and, while the near end talks, while
    /// its power smoothed over `doubleTalkComparisonSeconds` is below `doubleTalkForegroundMargin` times
    /// the MDF's: the talker is in both errors alike and pulls the MDF off meanwhile, so the difference
    /// between them is the two filters' echo; the longer smoothing averages out the talker's share of
    /// it, and an echo path that changed since the copy makes the copy's error the larger.
    /// Quality mode, one reference channel or two folded into one (the impulse response SpeexDSP gives).
    var foreground: VoiceForegroundFilter
    let tracksForeground: Bool
    /// The copy's response (`impulseResponseLength` values), the mean of the snapshots.
    let foregroundResponse: UnsafeMutablePointer<Float>
    let foregroundError: UnsafeMutablePointer<Float>
    var filterErrorPower: Float = 0
    var foregroundErrorPower: Float = 0
    /// The share of the copy's error in the latest frame's output, 0 or 1 (crossfaded over a frame).
    var foregroundShare: Float = 0
    static let foregroundMargin: Float = 0.8
    static let doubleTalkForegroundMargin: Float = 1.1
    /// The two-loudspeaker copy's margin while the near end talks: that copy is learned, and trails the
    /// MDF by about 3 dB on two correlated signals (a stereo mix), where a margin of 1.1 let it stand in
    /// for a better MDF (docs/DECISIONS.md).
    static let twoLoudspeakerDoubleTalkMargin: Float = 1
    static let doubleTalkComparisonSeconds = 0.2
    static let foregroundAveraging: Float = 0.3
    /// The copy for two loudspeakers that play different signals (an unfolded two-channel reference),
    /// learned from the two-loudspeaker MDF's echo estimate and used as `foreground` is (quality mode).
    var twoLoudspeakerCopy: VoiceTwoLoudspeakerCopy
    /// The two channels made uncorrelated for the two-loudspeaker MDF and its copy (a transform of what
    /// they model; docs/DECISIONS.md).
    var decorrelation: VoiceReferenceDecorrelation
    let tracksTwoLoudspeakerCopy: Bool
    /// A frame's inputs with their non-finite samples silenced (`process`), and pointers to their channels.
    let finiteInputs: UnsafeMutablePointer<Float>
    let finiteMic: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let finiteReference: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The aligned reference's two channels, this frame.
    let alignedLeft: UnsafeMutablePointer<Float>
    let alignedRight: UnsafeMutablePointer<Float>
    /// Per-frame smoothing of the slower comparison, and the two powers it smooths.
    let doubleTalkComparisonRate: Float
    var filterErrorPowerSlow: Float = 0
    var foregroundErrorPowerSlow: Float = 0
    /// SpeexDSP's DC notch on the microphone, repeated here so that `notch(mic) − output` is exactly the
    /// canceller's echo estimate: radius, and two state values per microphone channel.
    let notchRadius: Float
    let notchPoleTerm: Float
    var notchCompensation: VoiceNotchCompensation
    let notchMemory: UnsafeMutablePointer<Float>

    /// Allocates everything the kernel uses (control side).
    public init(settings: VoiceProcessorSettings) {
        precondition((1...2).contains(settings.micChannels) && (1...2).contains(settings.referenceChannels))
        precondition(settings.sampleRate >= 8000 && settings.sampleRate <= 96_000)
        self.settings = settings
        let fs = settings.sampleRate
        // An even frame, so that the suppressor's two hops are equal (440 samples at 44.1 kHz).
        frameLength = 2 * Int(fs / 200)
        alignmentMargin = Int(0.005 * fs)
        loudspeakerSpread = Int(0.020 * fs)
        widestLoudspeakerSpread = Int((settings.mode == .quality ? 0.060 : 0.020) * fs)
        let tail = settings.mode == .quality ? 0.150 : 0.040
        filterLength = alignmentMargin + Int(tail * fs)
        let maximumDelay = min(1, max(0.05, settings.maximumDelaySeconds))
        maximumLineDelay = Int(maximumDelay * fs)
        longestChannelShiftFrames = widestLoudspeakerSpread / frameLength
        var length = 1024
        while length < maximumLineDelay + (2 + longestChannelShiftFrames) * frameLength { length *= 2 }
        ringLength = length
        rings = .allocate(capacity: length * settings.referenceChannels)
        rings.initialize(repeating: 0, count: length * settings.referenceChannels)
        guard
            let state = speex_echo_state_init_mc(
                Int32(frameLength), Int32(filterLength), Int32(settings.micChannels),
                Int32(settings.referenceChannels))
        else { fatalError("speex_echo_state_init_mc failed") }
        echoState = state
        var rate = Int32(fs)
        speex_echo_ctl(echoState, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        if settings.referenceChannels == 2 {
            guard
                let folded = speex_echo_state_init_mc(
                    Int32(frameLength), Int32(filterLength), Int32(settings.micChannels), 1)
            else { fatalError("speex_echo_state_init_mc failed") }
            speex_echo_ctl(folded, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
            foldedEchoState = folded
        } else {
            foldedEchoState = nil
        }
        referenceFolded = settings.referenceChannels == 2
        foldingReturnFrames = Int(Self.foldingReturnSeconds * fs) / frameLength
        nearerLoudspeakerMemoryFrames = Int(Self.nearerLoudspeakerMemorySeconds * fs) / frameLength
        var responseLength: Int32 = 0
        speex_echo_ctl(echoState, SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE, &responseLength)
        impulseResponseLength = max(1, Int(responseLength))
        impulseResponse = .allocate(capacity: impulseResponseLength)
        impulseResponse.initialize(repeating: 0, count: impulseResponseLength)
        // One loudspeaker's impulse response: one reference channel, or two folded into one.
        tracksForeground = settings.mode == .quality
        learnsDistortion = settings.learnsLoudspeakerDistortion && tracksForeground
        foreground = VoiceForegroundFilter(
            frameLength: frameLength, filterLength: tracksForeground ? impulseResponseLength : 1)
        foregroundResponse = .allocate(capacity: impulseResponseLength)
        foregroundResponse.initialize(repeating: 0, count: impulseResponseLength)
        tracksTwoLoudspeakerCopy = tracksForeground && settings.referenceChannels == 2
        twoLoudspeakerCopy = VoiceTwoLoudspeakerCopy(
            frameLength: frameLength, filterLength: tracksTwoLoudspeakerCopy ? impulseResponseLength : 1)
        decorrelation = VoiceReferenceDecorrelation(frameSeconds: Double(frameLength) / fs)
        let inputs = (settings.micChannels + settings.referenceChannels) * frameLength
        finiteInputs = .allocate(capacity: inputs)
        finiteInputs.initialize(repeating: 0, count: inputs)
        finiteMic = .allocate(capacity: settings.micChannels)
        for c in 0..<settings.micChannels { (finiteMic + c).initialize(to: finiteInputs + c * frameLength) }
        finiteReference = .allocate(capacity: settings.referenceChannels)
        for c in 0..<settings.referenceChannels {
            (finiteReference + c).initialize(to: finiteInputs + (settings.micChannels + c) * frameLength)
        }
        alignedLeft = .allocate(capacity: frameLength)
        alignedLeft.initialize(repeating: 0, count: frameLength)
        alignedRight = .allocate(capacity: frameLength)
        alignedRight.initialize(repeating: 0, count: frameLength)
        doubleTalkComparisonRate = Float(
            min(1, Double(frameLength) / fs / Self.doubleTalkComparisonSeconds))
        foregroundError = .allocate(capacity: frameLength)
        foregroundError.initialize(repeating: 0, count: frameLength)
        linearErlePeakDecay = Float(Self.linearErlePeakDecayDbPerSecond * Double(frameLength) / fs)
        distortion = NonlinearEchoCanceller(
            frameLength: frameLength, sampleRate: fs, filterLength: learnsDistortion ? impulseResponseLength : 1)
        // Low complexity correlates half as often: the tracker was about 7 % of that mode's time, and its
        // delay jumps recover within the same second (docs/VOICE.md).
        estimator = EchoDelayEstimator(
            sampleRate: fs, maximumDelaySeconds: maximumDelay, hop: settings.mode == .quality ? 1024 : 2048)
        if tracksTwoLoudspeakerCopy {
            leftEstimator = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: maximumDelay)
            rightEstimator = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: maximumDelay)
        }
        suppressors = .allocate(capacity: settings.micChannels)
        for c in 0..<settings.micChannels {
            // The low-complexity filter leaves more residual echo, which the double-talk detector takes
            // for the talker now and then: it keeps the far-end suppression while the near end talks.
            (suppressors + c).initialize(
                to: ResidualEchoSuppressor(
                    frameLength: frameLength, sampleRate: fs, keepsNearEnd: settings.mode == .quality,
                    windowHops: settings.mode == .quality ? 4 : 2))
        }
        latencyFrames = suppressors[0].hopLength
        notchRadius = VoiceNotchCompensation.notchRadius(sampleRate: fs)
        notchPoleTerm = VoiceNotchCompensation.notchPoleTerm(radius: notchRadius)
        notchCompensation = VoiceNotchCompensation(frameLength: frameLength, sampleRate: fs)
        // One notch state per MDF (the folded one has its own).
        notchMemory = .allocate(capacity: 2 * settings.micChannels * settings.referenceChannels)
        notchMemory.initialize(repeating: 0, count: 2 * settings.micChannels * settings.referenceChannels)
        agcState = VoiceAGC(frameLength: frameLength, sampleRate: fs)
        agcSettleFrames = Int(Self.agcSettleSeconds * fs) / frameLength
        agcSwitch = Atomic(settings.agc)
        noiseSwitch = Atomic(settings.noiseSuppression)
        let f = frameLength
        monoReference = .allocate(capacity: f)
        monoMic = .allocate(capacity: f)
        alignedMono = .allocate(capacity: f)
        preprocessedReference = .allocate(capacity: f)
        micInterleaved = .allocate(capacity: f * settings.micChannels)
        referenceInterleaved = .allocate(capacity: f * settings.referenceChannels)
        foldedInterleaved = .allocate(capacity: f)
        outputInterleaved = .allocate(capacity: f * settings.micChannels)
        errorFrame = .allocate(capacity: f)
        echoFrame = .allocate(capacity: f)
        let fftSize = suppressors[0].fftSize
        referenceFFT = VoiceFFT(size: fftSize)
        // The reference's spectra use the suppressor's window length (two frames, or one in
        // lowComplexity), so that their bins match.
        let referenceWindowLength = suppressors[0].windowLength
        referenceWindow = .allocate(capacity: referenceWindowLength)
        for n in 0..<referenceWindowLength {
            referenceWindow[n] = Float(
                EffectMath.sin(EffectMath.pi * (Double(n) + 0.5) / Double(referenceWindowLength)))
        }
        referenceInput = .allocate(capacity: 2 * f)
        referenceInput.initialize(repeating: 0, count: 2 * f)
        referenceTime = .allocate(capacity: fftSize)
        referenceTime.initialize(repeating: 0, count: fftSize)
        binCount = fftSize / 2 + 1
        referenceRe = .allocate(capacity: binCount)
        referenceIm = .allocate(capacity: binCount)
        historyLength = maximumLineDelay / f + 3
        history = .allocate(capacity: historyLength * binCount)
        history.initialize(repeating: 0, count: historyLength * binCount)
        referencePeak = .allocate(capacity: binCount)
        referencePeak.initialize(repeating: 0, count: binCount)
    }

    deinit {
        speex_echo_state_destroy(echoState)
        if let foldedEchoState { speex_echo_state_destroy(foldedEchoState) }
        foldedInterleaved.deallocate()
        distortion.deallocate()
        foreground.deallocate()
        twoLoudspeakerCopy.deallocate()
        finiteInputs.deallocate()
        finiteMic.deallocate()
        finiteReference.deallocate()
        alignedLeft.deallocate()
        alignedRight.deallocate()
        foregroundError.deallocate()
        foregroundResponse.deallocate()
        impulseResponse.deallocate()
        preprocessedReference.deallocate()
        estimator.deallocate()
        leftEstimator?.deallocate()
        rightEstimator?.deallocate()
        for c in 0..<settings.micChannels { suppressors[c].deallocate() }
        suppressors.deinitialize(count: settings.micChannels)
        suppressors.deallocate()
        rings.deallocate()
        notchMemory.deallocate()
        monoReference.deallocate()
        monoMic.deallocate()
        alignedMono.deallocate()
        micInterleaved.deallocate()
        referenceInterleaved.deallocate()
        outputInterleaved.deallocate()
        errorFrame.deallocate()
        echoFrame.deallocate()
        referenceFFT.deallocate()
        referenceWindow.deallocate()
        referenceInput.deallocate()
        referenceTime.deallocate()
        referenceRe.deallocate()
        referenceIm.deallocate()
        history.deallocate()
        referencePeak.deallocate()
    }

    /// Switches the AGC on or off from the next frame (any thread).
    public func setAGC(_ on: Bool) { agcSwitch.store(on, ordering: .relaxed) }
    /// Switches noise suppression on or off from the next frame (any thread).
    public func setNoiseSuppression(_ on: Bool) { noiseSwitch.store(on, ordering: .relaxed) }

    /// The latest frame's analysis, read on the thread that calls `process`.
    public var analysis: VoiceAnalysis { current }

    /// The latest analysis as published for other threads (relaxed atomics; the fields may come from
    /// neighbouring frames).
    public var publishedAnalysis: VoiceAnalysis {
        let flags = publishedFlags.load(ordering: .relaxed)
        return VoiceAnalysis(
            erleDb: Float(bitPattern: publishedErle.load(ordering: .relaxed)),
            delayMs: Float(bitPattern: publishedDelay.load(ordering: .relaxed)),
            doubleTalk: flags & 1 != 0, nearEndActive: flags & 2 != 0)
    }

    /// Rounds to the nearest 16-bit value (ties to even) without a library call: adding and subtracting
    /// 1.5 · 2²³ leaves an integer for any |v| ≤ 2²². A NaN (which the frame's entry keeps out of the
    /// inputs) gives 0 rather than a trap.
    @inline(__always)
    static func toInt16(_ x: Float) -> Int16 {
        let scaled = x * 32768
        let v = scaled.isNaN ? 0 : min(max(scaled, -32768), 32767)
        return Int16((v + 12_582_912) - 12_582_912)
    }

    @inline(__always)
    static func decibels(_ power: Float) -> Float {
        Float(10 * EffectMath.log(Double(max(power, 1e-30))) * 0.434_294_481_903_251_83)
    }

    /// `process` for a frame whose samples are all finite.
    func processFinite(
        mic: UnsafePointer<UnsafeMutablePointer<Float>>, reference: UnsafePointer<UnsafeMutablePointer<Float>>,
        output: UnsafePointer<UnsafeMutablePointer<Float>>
    ) {
        let f = frameLength
        let micCount = settings.micChannels
        let referenceCount = settings.referenceChannels
        let mask = ringLength - 1
        // 1. Whether a two-channel reference carries one signal; the reference into the delay line; mono
        // mixes for the delay tracker.
        if referenceCount == 2 {
            var left = 0.0
            var right = 0.0
            var cross = 0.0
            for n in 0..<f {
                let l = Double(reference[0][n])
                let r = Double(reference[1][n])
                left += l * l
                right += r * r
                cross += l * r
            }
            updateFolding(left: left, right: right, cross: cross)
            if channelShiftFrames == 0 && hasFarEndSound(left: left, right: right) {
                decorrelation.update(left: left, right: right, cross: cross)
            }
        }
        let leftScale = referenceCount == 2 ? leftWeight : 1
        let rightScale = rightWeight
        let micScale = 1 / Float(micCount)
        for n in 0..<f {
            let l = reference[0][n]
            rings[(ringWrite + n) & mask] = l
            var r = leftScale * l
            if referenceCount == 2 {
                let v = reference[1][n]
                rings[ringLength + ((ringWrite + n) & mask)] = v
                r += rightScale * v
            }
            monoReference[n] = r
            var m: Float = 0
            for c in 0..<micCount { m += mic[c][n] }
            monoMic[n] = m * micScale
        }
        ringWrite = (ringWrite + f) & mask
        estimator.push(reference: monoReference, mic: monoMic, count: f)
        pushChannelEstimators(reference: reference, mic: monoMic)
        followTrackedDelay()
        if !playsTwoSignals || !tracksTwoLoudspeakerCopy {
            // One signal (folded) or one channel: no shift to make. A shift made stays for the
            // two-loudspeaker MDF, which keeps its filter while the folded one runs, and applies again
            // when the reference unfolds.
        } else if channelShiftFrames == 0 {
            considerChannelShift()
        } else {
            updateShiftedDecorrelation()
        }
        // 2. Aligned reference and microphone to 16-bit for the MDF.
        let start = ringWrite - f - lineDelay
        let shift = playsTwoSignals ? channelShiftFrames * f : 0
        let leftStart = start - (farChannel == 0 ? shift : 0)
        let rightStart = start - (farChannel == 1 ? shift : 0)
        for n in 0..<f {
            let l = rings[(leftStart + n) & mask]
            var r = leftScale * l
            if referenceCount == 2 {
                let v = rings[ringLength + ((rightStart + n) & mask)]
                let (u0, u1) = decorrelation.apply(l, v)
                referenceInterleaved[2 * n] = Self.toInt16(u0)
                referenceInterleaved[2 * n + 1] = Self.toInt16(u1)
                alignedLeft[n] = u0
                alignedRight[n] = u1
                r += rightScale * v
            } else {
                referenceInterleaved[n] = Self.toInt16(l)
            }
            alignedMono[n] = r
            for c in 0..<micCount { micInterleaved[n * micCount + c] = Self.toInt16(mic[c][n]) }
        }
        // One loudspeaker's MDF: one reference channel, or two carrying one signal.
        let oneLoudspeaker = referenceCount == 1 || referenceFolded
        let state = referenceFolded ? foldedEchoState ?? echoState : echoState
        let mdfReference = referenceFolded ? foldedInterleaved : referenceInterleaved
        if referenceFolded {
            for n in 0..<f { foldedInterleaved[n] = Self.toInt16(alignedMono[n]) }
        }
        if tracksForeground && oneLoudspeaker {
            // The MDF's impulse response, for the distortion's regressors and the frozen copy.
            if framesProcessed % Self.impulseResponseInterval == 0 {
                speex_echo_ctl(state, SPEEX_ECHO_GET_IMPULSE_RESPONSE, impulseResponse)
                let response = impulseResponse
                let scale = 1 / (32767 * Float(2 * f))
                if learnsDistortion {
                    distortion.setFilter(length: impulseResponseLength) { Float(response[$0]) * scale }
                }
                if nearEndHangover == 0 && (!foreground.hasFilter || filterErrorPower <= foregroundErrorPower) {
                    let copy = foregroundResponse
                    if !foreground.hasFilter {
                        for i in 0..<impulseResponseLength { copy[i] = Float(response[i]) * scale }
                    } else {
                        let a = Self.foregroundAveraging
                        for i in 0..<impulseResponseLength { copy[i] += a * (Float(response[i]) * scale - copy[i]) }
                    }
                    foreground.setFilter(length: impulseResponseLength) { copy[$0] }
                }
            }
            if learnsDistortion {
                // The reference with the learned distortion in it (one channel: `alignedMono` is that
                // channel).
                distortion.prepare(reference: alignedMono, preprocessed: preprocessedReference)
                for n in 0..<f { mdfReference[n] = Self.toInt16(preprocessedReference[n]) }
                foreground.push(preprocessedReference)
            } else {
                foreground.push(alignedMono)
            }
        }
        if tracksTwoLoudspeakerCopy {
            if oneLoudspeaker {
                twoLoudspeakerCopy.skip()
            } else {
                twoLoudspeakerCopy.push(left: alignedLeft, right: alignedRight)
            }
        }
        speex_echo_cancellation(state, micInterleaved, mdfReference, outputInterleaved)
        // 3. Reference power spectrum history and the peak over where the echo can be.
        var referencePower: Float = 0
        for n in 0..<f {
            referenceInput[n] = referenceInput[n + f]
            referenceInput[n + f] = alignedMono[n]
            referencePower += alignedMono[n] * alignedMono[n]
        }
        referencePower /= Float(f)
        let w = suppressors[0].windowLength
        for n in 0..<w { referenceTime[n] = referenceInput[2 * f - w + n] * referenceWindow[n] }
        referenceFFT.forward(referenceTime, re: referenceRe, im: referenceIm)
        let row = history + historyIndex * binCount
        for k in 0..<binCount { row[k] = referenceRe[k] * referenceRe[k] + referenceIm[k] * referenceIm[k] }
        historyIndex = (historyIndex + 1) % historyLength
        // Every delay the line allows until a delay is confirmed, and for `wideSpanFrames` after each
        // alignment while the MDF has not learned it; then the 40 ms after the line's delay.
        let narrow = estimator.agreements >= 2 && (converged || framesSinceAlignment >= Self.wideSpanFrames)
        let span = narrow ? min(4, historyLength) : historyLength
        let weight: Float = converged ? 0 : 1
        do {
            for k in 0..<binCount { referencePeak[k] = 0 }
            for j in 1...span {
                let r = history + ((historyIndex - j + historyLength) % historyLength) * binCount
                for k in 0..<binCount { referencePeak[k] = max(referencePeak[k], r[k]) }
            }
        }
        if referencePower > 1e-7 {
            farEndHangover = Int(0.15 * settings.sampleRate) / f
        } else if farEndHangover > 0 {
            farEndHangover -= 1
        }
        let farEndActive = farEndHangover > 0
        // 4. Residual echo and noise suppression per microphone channel.
        let noiseOn = noiseSwitch.load(ordering: .relaxed)
        var micPower: Float = 0
        var errorPower: Float = 0
        var inputSpectral: Float = 0
        var outputSpectral: Float = 0
        var excessSpectral: Float = 0
        var interferenceSpectral: Float = 0
        var coherence: Float = 1
        var errorCoherence: Float = 0
        for c in 0..<micCount {
            let x = mic[c]
            // The notch of speex's mdf.c, float build: den2 = r² + 0.7·(1 − r)², on the 16-bit input.
            let r = notchRadius
            let den2 = notchPoleTerm
            let notch = notchMemory + (referenceFolded ? 2 * micCount : 0) + 2 * c
            var m0 = notch[0]
            var m1 = notch[1]
            for n in 0..<f {
                let vin = Float(micInterleaved[n * micCount + c])
                let vout = m0 + vin
                m0 = m1 + 2 * (-vin + r * vout)
                m1 = vin - den2 * vout
                let e = Float(outputInterleaved[n * micCount + c]) * (1 / 32768)
                errorFrame[n] = e
                echoFrame[n] = r * vout * (1 / 32768) - e
                micPower += x[n] * x[n]
                errorPower += e * e
            }
            if c == 0 && learnsDistortion && oneLoudspeaker && farEndActive && nearEndHangover == 0
                && linearErleDb >= Self.distortionLearningErleDb
                && linearErleDb >= linearErlePeak - Self.distortionLearningDropDb
            {
                distortion.learn(error: errorFrame)
            }
            if c == 0 && tracksForeground && oneLoudspeaker && foreground.hasFilter {
                useForeground(foreground.estimate, doubleTalkMargin: Self.doubleTalkForegroundMargin)
            }
            if c == 0 && tracksTwoLoudspeakerCopy && !oneLoudspeaker {
                // Learns from the MDF's own echo estimate while it is trusted, as the one-loudspeaker
                // copy takes its snapshots.
                if farEndActive && nearEndHangover == 0
                    && (!twoLoudspeakerCopy.hasFilter || filterErrorPower <= foregroundErrorPower)
                {
                    twoLoudspeakerCopy.learn(target: echoFrame)
                }
                if twoLoudspeakerCopy.hasFilter {
                    useForeground(twoLoudspeakerCopy.estimate, doubleTalkMargin: Self.twoLoudspeakerDoubleTalkMargin)
                }
            }
            notch[0] = m0 + 1e-20 - 1e-20
            notch[1] = m1 + 1e-20 - 1e-20
            suppressors[c].process(
                error: errorFrame, echo: echoFrame, referencePeak: referencePeak, referenceWeight: weight,
                farEndActive: farEndActive, nearEndActive: nearEndHangover > 0, clearTalker: clearTalker,
                // Two loudspeakers with two signals leave more echo in double talk: no settling there.
                settlesDoubleTalk: oneLoudspeaker,
                noiseSuppression: noiseOn, output: output[c])
            inputSpectral += suppressors[c].inputPower
            outputSpectral += suppressors[c].outputPower
            excessSpectral += suppressors[c].excessPower
            coherence = min(coherence, suppressors[c].echoCoherence)
            errorCoherence = max(errorCoherence, suppressors[c].errorEchoCoherence)
            interferenceSpectral += suppressors[c].noisePower + suppressors[c].echoPower
        }
        // 5. Activity, convergence and the analysis.
        let loud = excessSpectral > 1e-7 * Float(micCount)
        let nearNow: Bool
        if converged && farEndActive {
            // A far-end burst of new spectral content leaves the filter behind for a moment: an excess
            // that stays coherent with the echo estimate must be clearly larger to count as a talker.
            let margin: Float = coherence > 0.9 ? 6 : 2
            let quiet =
                settings.mode == .quality && loud && errorCoherence < Self.quietTalkerCoherence
                && excessSpectral > 2 * interferenceSpectral
            quietTalkerRun = quiet ? quietTalkerRun + 1 : 0
            nearNow =
                (loud && coherence < 0.95 && excessSpectral > margin * interferenceSpectral)
                || quietTalkerRun >= Self.quietTalkerFrames
        } else {
            quietTalkerRun = 0
            nearNow = loud && excessSpectral > 2 * interferenceSpectral
        }
        // Only for the next frame: held longer, it would let the echo through after the talker stops.
        clearTalker = nearNow && excessSpectral > Self.clearTalkerExcess * interferenceSpectral
        if nearNow {
            nearEndHangover = 20
        } else if nearEndHangover > 0 {
            nearEndHangover -= 1
        }
        let nearEndActive = nearEndHangover > 0
        if farEndActive && !nearEndActive {
            let a: Float = 0.05
            micPowerMean += a * (micPower - micPowerMean)
            errorPowerMean += a * (errorPower - errorPowerMean)
            // The suppressor's gain applies to what the linear stage left (the error), not to the mic.
            outputPowerMean += a * (outputSpectral / max(inputSpectral, 1e-30) * errorPower - outputPowerMean)
            current.erleDb = Self.decibels(micPowerMean) - Self.decibels(outputPowerMean)
        }
        framesProcessed += 1
        framesSinceAlignment += 1
        linearErleDb = Self.decibels(micPowerMean) - Self.decibels(errorPowerMean)
        if farEndActive && !nearEndActive {
            linearErlePeak = max(linearErlePeak - linearErlePeakDecay, linearErleDb)
        }
        if !converged && estimator.agreements >= 2 && framesSinceAlignment > 50 {
            // The two-loudspeaker MDF adapts twice the weights, and takes about twice as long.
            let limit = Self.convergenceLimitFrames * (playsTwoSignals ? 2 : 1)
            convergedRun = linearErleDb > Self.convergedErleDb ? convergedRun + 1 : 0
            let held = channelShiftFrames > 0 ? Self.twoLoudspeakerConvergedFrames : 1
            if convergedRun >= held || framesSinceAlignment > limit {
                converged = true
                convergedRun = 0
            }
        }
        current.nearEndActive = nearEndActive
        current.doubleTalk = nearEndActive && farEndActive
        // 6. The low end the MDF's DC notch took from the talker (docs/VOICE.md).
        notchCompensation.process(output, channelCount: micCount, nearEndActive: nearEndActive)
        // 7. AGC.
        if agcSwitch.load(ordering: .relaxed) {
            let speech =
                nearNow && !farEndActive && excessSpectral > Self.agcSpeechExcess * interferenceSpectral
                && framesProcessed >= agcSettleFrames
            agcState.process(output, channelCount: micCount, speech: speech)
        }
        publishedErle.store(current.erleDb.bitPattern, ordering: .relaxed)
        publishedDelay.store(current.delayMs.bitPattern, ordering: .relaxed)
        publishedFlags.store((current.doubleTalk ? 1 : 0) | (nearEndActive ? 2 : 0), ordering: .relaxed)
    }
}
