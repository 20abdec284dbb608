// Render side (process, apply) and control side (allocation). The 3D environment node's mix: every
// source connection is a voice (downmix, Doppler, occlusion/obstruction and reverb send, then its
// rendering algorithm into the output bus); the reverb returns on the front pair; output volume last.

/// Where one voice stands, computed by the control side from the listener and the source.
public struct SpatialVoiceTarget: BitwiseCopyable {
    public var direction: SourceDirection
    /// Distance × cone gain (the source's own volume applies per sample from its mixing state).
    public var gain: Float
    public var reverbBlend: Double
    public var obstructionDecibels: Double
    public var occlusionDecibels: Double
    /// Doppler pitch ratio (1: none).
    public var dopplerRatio: Double
    /// The resolved algorithm (never `.auto`).
    public var algorithm: SpatialRenderingAlgorithm
    /// True when the source's channels are copied as they are (stereo pass-through, bypass mode).
    public var passesThrough: Bool
    /// True for an ambience bed (`AmbienceBed`): its channels are placed by `bedRotation`, and the
    /// direction, Doppler, filters and algorithm are not used.
    public var rendersBed: Bool
    /// The bed's frame in listener coordinates.
    public var bedRotation: SpatialRotation
    public var rampFrames: Int32

    public init(
        direction: SourceDirection, gain: Float, reverbBlend: Double, obstructionDecibels: Double,
        occlusionDecibels: Double, dopplerRatio: Double, algorithm: SpatialRenderingAlgorithm,
        passesThrough: Bool, rendersBed: Bool = false, bedRotation: SpatialRotation = .identity,
        rampFrames: Int32
    ) {
        self.rendersBed = rendersBed
        self.bedRotation = bedRotation
        self.direction = direction
        self.gain = gain
        self.reverbBlend = reverbBlend
        self.obstructionDecibels = obstructionDecibels
        self.occlusionDecibels = occlusionDecibels
        self.dopplerRatio = dopplerRatio
        self.algorithm = algorithm
        self.passesThrough = passesThrough
        self.rampFrames = rampFrames
    }
}

/// One source connection into an environment. Allocated and freed on the control side; the HRTF
/// convolver is installed by the control side before the voice is first rendered (or by a command).
public struct SpatialVoice {
    public var algorithm: SpatialRenderingAlgorithm = .equalPowerPanning
    public var passesThrough = false
    public var equalPower = EqualPowerPanningKernel()
    public var head: SphericalHeadKernel
    public var hrtf: UnsafeMutablePointer<HRTFConvolver>?
    /// The ambience bed of a source in that mode (installed like `hrtf`), and whether it renders now.
    public var bed: UnsafeMutablePointer<AmbienceBed>?
    public var rendersBed = false
    public var vbap: VBAPKernel?
    public var encoder = AmbisonicEncoder()
    public var passThrough = PassThroughKernel()
    public var filter: SourceEnvironmentFilter
    public var doppler: DopplerResampler
    public var usesDoppler = false
    /// The reverb blend, obstruction and occlusion last given to `filter` (NaN: none yet), so a move that
    /// leaves them alone does not redesign the filters.
    public var sendSettings: (reverbBlend: Double, obstruction: Double, occlusion: Double) = (.nan, .nan, .nan)
    /// Scratch of `maxBlockFrames` each: the downmix, the Doppler output, the direct path.
    public let mono: UnsafeMutablePointer<Float>
    public let shifted: UnsafeMutablePointer<Float>
    public let direct: UnsafeMutablePointer<Float>

    /// Control side. `layout` gives the voice a VBAP kernel when it has more than two channels.
    public init(sampleRate: Double, maxBlockFrames: Int, layout: SpeakerLayout) {
        head = SphericalHeadKernel(sampleRate: sampleRate)
        filter = SourceEnvironmentFilter(sampleRate: sampleRate)
        doppler = DopplerResampler(sampleRate: sampleRate)
        vbap = layout.channelCount > 2 ? VBAPKernel(layout: layout) : nil
        let n = max(1, maxBlockFrames)
        mono = .allocate(capacity: n)
        shifted = .allocate(capacity: n)
        direct = .allocate(capacity: n)
        mono.initialize(repeating: 0, count: n)
        shifted.initialize(repeating: 0, count: n)
        direct.initialize(repeating: 0, count: n)
    }

    /// Control side, once no program or command can reach the voice (the convolver is freed by its owner).
    public func deallocate() {
        head.deallocate()
        doppler.deallocate()
        vbap?.deallocate()
        mono.deallocate()
        shifted.deallocate()
        direct.deallocate()
    }
}

/// The environment's own render state: its reverb, the B-format bus of its sound-field voices and
/// their decoder, and the return and output gains.
public struct EnvironmentState {
    public var reverb: ReverbKernel
    /// One EQ band on the reverb return (AVAudioEnvironmentReverbParameters.filterParameters).
    public var reverbFilter: EQKernel
    public let reverbIn: BusRef
    public let reverbOut: BusRef
    public let reverbFiltered: BusRef
    public let bformat: BusRef
    public let decoder: AmbisonicDecoder
    public var reverbEnabled = false
    /// True once the reverb has been skipped (off and silent): its state is stale and is cleared before
    /// it runs again.
    public var reverbIsIdle = false
    public var reverbLevel = ParameterRamp(1)
    public var outputVolume = ParameterRamp(1)
    public let maxBlockFrames: Int

    /// Control side.
    public init(sampleRate: Double, maxBlockFrames: Int, layout: SpeakerLayout) {
        let frames = max(1, maxBlockFrames)
        self.maxBlockFrames = frames
        reverb = ReverbKernel(sampleRate: sampleRate, maxBlockFrames: frames, channelCount: 2)
        reverb.setWetDryMix(percent: 100)
        reverbFilter = EQKernel(sampleRate: sampleRate, maxBlockFrames: frames, channelCount: 2, bandCount: 1)
        func bus(_ channels: Int) -> BusRef {
            let data = UnsafeMutablePointer<Float>.allocate(capacity: channels * frames)
            data.initialize(repeating: 0, count: channels * frames)
            return BusRef(data: data, channelCount: channels, stride: frames)
        }
        reverbIn = bus(2)
        reverbOut = bus(2)
        reverbFiltered = bus(2)
        bformat = bus(4)
        decoder = AmbisonicDecoder(layout: layout)
    }

    /// Control side.
    public func deallocate() {
        reverb.deallocate()
        reverbFilter.deallocate()
        reverbIn.data.deallocate()
        reverbOut.data.deallocate()
        reverbFiltered.data.deallocate()
        bformat.data.deallocate()
        decoder.deallocate()
    }
}

/// One source feeding an environment, as the compiled program lists it.
public struct EnvironmentInput: BitwiseCopyable {
    public var source: BusRef
    /// The source's mixing state: its volume (`chunkMono`) scales the voice.
    public var mixing: UnsafeMutablePointer<MixingState>
    public var fade: UnsafeMutablePointer<ParameterRamp>
    public var voice: UnsafeMutablePointer<SpatialVoice>

    public init(
        source: BusRef, mixing: UnsafeMutablePointer<MixingState>, fade: UnsafeMutablePointer<ParameterRamp>,
        voice: UnsafeMutablePointer<SpatialVoice>
    ) {
        self.source = source
        self.mixing = mixing
        self.fade = fade
        self.voice = voice
    }
}

/// The environment's render step.
public enum EnvironmentRender {
    /// Render side. Moves a voice towards `target`: every gain and direction glides over the target's
    /// ramp; a change of algorithm starts the new one from silence at its target (the old one stops).
    @inlinable
    public static func apply(_ target: SpatialVoiceTarget, to voice: UnsafeMutablePointer<SpatialVoice>) {
        let ramp = Int(target.rampFrames)
        if target.rendersBed {
            // A bed starts from its targets when it takes over; only its glides and its volume matter.
            let starts = !voice.pointee.rendersBed
            voice.pointee.rendersBed = true
            voice.pointee.bed?.pointee.setRotation(target.bedRotation, gain: target.gain, rampFrames: starts ? 0 : ramp)
            return
        }
        let leavesBed = voice.pointee.rendersBed
        voice.pointee.rendersBed = false
        if leavesBed || voice.pointee.algorithm != target.algorithm
            || voice.pointee.passesThrough != target.passesThrough
        {
            voice.pointee.algorithm = target.algorithm
            voice.pointee.passesThrough = target.passesThrough
            voice.pointee.equalPower.reset()
            voice.pointee.head.reset()
            voice.pointee.hrtf?.pointee.reset()
            voice.pointee.vbap?.reset()
            voice.pointee.encoder.reset()
        }
        let d = target.direction
        let g = target.gain
        switch target.algorithm {
        case .sphericalHead: voice.pointee.head.setDirection(d, gain: g, rampFrames: ramp)
        case .hrtf, .hrtfHQ: voice.pointee.hrtf?.pointee.setGain(g, rampFrames: ramp)
        case .soundField: voice.pointee.encoder.setDirection(d, gain: g, rampFrames: ramp)
        case .vectorBasedPanning:
            if voice.pointee.vbap != nil { voice.pointee.vbap!.setDirection(d, gain: g, rampFrames: ramp) }
        default: voice.pointee.equalPower.setDirection(d, gain: g, rampFrames: ramp)
        }
        voice.pointee.passThrough.setGain(target.passesThrough ? 1 : 0, rampFrames: ramp)
        let sends = voice.pointee.sendSettings
        if sends.reverbBlend != target.reverbBlend || sends.obstruction != target.obstructionDecibels
            || sends.occlusion != target.occlusionDecibels
        {
            voice.pointee.filter.setParameters(
                reverbBlend: target.reverbBlend, obstructionDecibels: target.obstructionDecibels,
                occlusionDecibels: target.occlusionDecibels, rampFrames: ramp)
            voice.pointee.sendSettings = (target.reverbBlend, target.obstructionDecibels, target.occlusionDecibels)
        }
        // The Doppler stage runs only once a ratio other than 1 was asked for; until then it rests at 1.
        voice.pointee.usesDoppler = voice.pointee.usesDoppler || target.dopplerRatio != 1
        if voice.pointee.usesDoppler { voice.pointee.doppler.setPitchRatio(target.dopplerRatio, rampFrames: ramp) }
    }

    /// Render side. Renders `frames` frames of every voice into `bus` (cleared first).
    @inlinable
    public static func process(
        _ env: UnsafeMutablePointer<EnvironmentState>, inputs: UnsafeBufferPointer<EnvironmentInput>,
        into bus: BusRef, frames: Int
    ) {
        for c in 0..<bus.channelCount { MixKernel.clear(bus.channel(c), count: frames) }
        for c in 0..<4 { MixKernel.clear(env.pointee.bformat.channel(c), count: frames) }
        MixKernel.clear(env.pointee.reverbIn.channel(0), count: frames)
        var usesSoundField = false
        for input in inputs {
            let voice = input.voice
            let source = input.source
            let fade = input.fade.pointee
            if voice.pointee.rendersBed {
                // An ambience bed: every channel encoded at its place, decoded with the sound field.
                if let bed = voice.pointee.bed {
                    usesSoundField = true
                    bed.pointee.process(
                        source: source, gain: input.mixing.pointee.chunkMono, fade: fade,
                        scratch: voice.pointee.mono, bformat: env.pointee.bformat, frames: frames)
                }
                input.fade.pointee.advance(frames: frames)
                continue
            }
            if voice.pointee.passesThrough {
                // A stereo bed (or a bypassed source): its channels as they are, at its volume.
                for c in 0..<min(source.channelCount, bus.channelCount) {
                    var gain = input.mixing.pointee.chunkMono
                    var f = fade
                    MixKernel.accumulate(source.channel(c), into: bus.channel(c), count: frames, gain: &gain, fade: &f)
                }
                if source.channelCount == 1 && bus.channelCount > 1 {
                    var gain = input.mixing.pointee.chunkMono
                    var f = fade
                    MixKernel.accumulate(source.channel(0), into: bus.channel(1), count: frames, gain: &gain, fade: &f)
                }
                input.fade.pointee.advance(frames: frames)
                continue
            }
            // Mono downmix at the source's volume and the connection's fade. A mono source at unity (the
            // usual case) is read where it is.
            let mono = voice.pointee.mono
            var signal: UnsafePointer<Float>
            let unity =
                !input.mixing.pointee.chunkMono.isRamping && !fade.isRamping
                && input.mixing.pointee.chunkMono.value * fade.value == 1
            if source.channelCount == 1 && unity {
                signal = UnsafePointer(source.channel(0))
            } else {
                MixKernel.clear(mono, count: frames)
                let scale = 1 / Float(max(1, source.channelCount))
                for c in 0..<source.channelCount {
                    var gain = input.mixing.pointee.chunkMono
                    var f = fade
                    MixKernel.accumulate(
                        source.channel(c), into: mono, count: frames, gain: &gain, fade: &f,
                        scale: scale)
                }
                signal = UnsafePointer(mono)
            }
            input.fade.pointee.advance(frames: frames)
            if voice.pointee.usesDoppler {
                voice.pointee.doppler.process(input: signal, output: voice.pointee.shifted, frames: frames)
                signal = UnsafePointer(voice.pointee.shifted)
            }
            // Transparent occlusion/obstruction/send stages (the defaults) pass the signal on as it is.
            let direct: UnsafePointer<Float>
            if voice.pointee.filter.isTransparent {
                voice.pointee.filter.passOver(input: signal, frames: frames)
                direct = signal
            } else {
                voice.pointee.filter.process(
                    input: signal, direct: voice.pointee.direct,
                    reverbSend: env.pointee.reverbIn.channel(0), frames: frames)
                direct = UnsafePointer(voice.pointee.direct)
            }
            switch voice.pointee.algorithm {
            case .sphericalHead: voice.pointee.head.process(input: direct, output: bus, frames: frames)
            case .hrtf, .hrtfHQ:
                if let hrtf = voice.pointee.hrtf { hrtf.pointee.process(input: direct, output: bus, frames: frames) }
            case .soundField:
                usesSoundField = true
                voice.pointee.encoder.process(input: direct, bformat: env.pointee.bformat, frames: frames)
            case .vectorBasedPanning:
                if voice.pointee.vbap != nil {
                    voice.pointee.vbap!.process(input: direct, output: bus, frames: frames)
                } else {
                    voice.pointee.equalPower.process(input: direct, output: bus, frames: frames)
                }
            default: voice.pointee.equalPower.process(input: direct, output: bus, frames: frames)
            }
        }
        if usesSoundField {
            env.pointee.decoder.process(bformat: env.pointee.bformat, output: bus, frames: frames)
        }
        // The reverb: a mono send into the stereo network, through the return filter, on the front pair.
        // Off and silent, it does not run (its network costs several ms of CPU per second); it restarts
        // from silence.
        if env.pointee.reverbEnabled || env.pointee.reverbLevel.isRamping {
            if env.pointee.reverbIsIdle {
                env.pointee.reverb.reset()
                env.pointee.reverbIsIdle = false
            }
            let reverbIn = env.pointee.reverbIn
            MixKernel.copy(reverbIn.channel(0), to: reverbIn.channel(1), count: frames)
            env.pointee.reverb.process(input: reverbIn, output: env.pointee.reverbOut, frames: frames)
            env.pointee.reverbFilter.process(
                input: env.pointee.reverbOut, output: env.pointee.reverbFiltered,
                frames: frames)
            for c in 0..<min(2, bus.channelCount) {
                var level = env.pointee.reverbLevel
                MixKernel.accumulate(
                    env.pointee.reverbFiltered.channel(c), into: bus.channel(c), count: frames,
                    gain: &level)
            }
        } else {
            env.pointee.reverbIsIdle = true
        }
        env.pointee.reverbLevel.advance(frames: frames)
        for c in 0..<bus.channelCount {
            var gain = env.pointee.outputVolume
            MixKernel.scale(bus.channel(c), count: frames, gain: &gain)
        }
        env.pointee.outputVolume.advance(frames: frames)
    }
}
