import AudioDSP
import DSPTestSupport
import Testing

/// One frame of error, echo and output and a reference peak per bin, for feeding a suppressor.
struct SuppressorBuffers {
    let error: UnsafeMutablePointer<Float>
    let echo: UnsafeMutablePointer<Float>
    let output: UnsafeMutablePointer<Float>
    let peak: UnsafeMutablePointer<Float>

    init(frameLength: Int, binCount: Int) {
        error = .allocate(capacity: frameLength)
        echo = .allocate(capacity: frameLength)
        output = .allocate(capacity: frameLength)
        peak = .allocate(capacity: binCount)
    }

    func deallocate() {
        error.deallocate()
        echo.deallocate()
        output.deallocate()
        peak.deallocate()
    }
}

@Suite struct ResidualEchoSuppressorTests {
    static let sampleRate = 48_000.0
    static let frameLength = 480

    /// Runs a fresh suppressor over a 1 kHz talker of `amplitude` for `frames` frames, with a flat
    /// residual-echo estimate of `echoPower` per bin (the reference predictor, unweighted; the
    /// regressions never learn, the far end being marked silent). Returns the output.
    func run(
        amplitude: Float, echoPower: Float, frames: Int, nearEndActive: Bool, clearTalker: Bool,
        onsetFrame: Int = 0, instant: Bool = true, echoBand: ClosedRange<Double> = 0...24_000,
        configure: (inout ResidualEchoSuppressor) -> Void = { _ in }
    ) -> [Float] {
        var suppressor = ResidualEchoSuppressor(frameLength: Self.frameLength, sampleRate: Self.sampleRate)
        if !instant { suppressor.instantClearTalkerExcess = .infinity }
        configure(&suppressor)
        defer { suppressor.deallocate() }
        let f = Self.frameLength
        let buffers = SuppressorBuffers(frameLength: f, binCount: suppressor.binCount)
        defer { buffers.deallocate() }
        let (error, echo, output, peak) = (buffers.error, buffers.echo, buffers.output, buffers.peak)
        echo.initialize(repeating: 0, count: f)
        let hertzPerBin = Self.sampleRate / Double(suppressor.fftSize)
        for k in 0..<suppressor.binCount { peak[k] = echoBand.contains(Double(k) * hertzPerBin) ? echoPower : 0 }
        var out: [Float] = []
        for frame in 0..<frames {
            for n in 0..<f {
                let t = Double(frame * f + n) / Self.sampleRate
                error[n] = frame < onsetFrame ? 0 : amplitude * Float(EffectMath.sin(2 * EffectMath.pi * 1000 * t))
            }
            suppressor.process(
                error: error, echo: echo, referencePeak: peak, referenceWeight: 1, farEndActive: false,
                nearEndActive: nearEndActive, clearTalker: clearTalker, noiseSuppression: false, output: output)
            out += Array(UnsafeBufferPointer(start: output, count: f))
        }
        return out
    }

    /// The talker's level in the last half second of `out` against the input's, in dB.
    func talkerGain(_ out: [Float], amplitude: Float) -> Double {
        let tail = out.suffix(Int(Self.sampleRate / 2))
        let measured = Goertzel.amplitude(Array(tail), frequency: 1000, sampleRate: Self.sampleRate)
        return Decibels.fromAmplitude(measured / Double(amplitude))
    }

    @Test func aClearTalkerIsSuppressedLessThanATalkerInDoubleTalk() {
        // The echo estimate is set where 5× over-subtraction takes the talker well down (about −13 dB)
        // and 2× much less (about −4 dB): the clear talker keeps at least 6 dB more of itself, and
        // neither goes below the double-talk floor (−18 dB) or above unity. The double talk is held at its
        // first 100 ms's over-subtraction throughout (see the next test for what follows them).
        let amplitude: Float = 0.1
        let echoPower: Float = 60
        let frames = 200
        let doubleTalk = talkerGain(
            run(
                amplitude: amplitude, echoPower: echoPower, frames: frames, nearEndActive: true, clearTalker: false,
                configure: { $0.settledDoubleTalkOverSubtraction = $0.doubleTalkOverSubtraction }),
            amplitude: amplitude)
        let clear = talkerGain(
            run(amplitude: amplitude, echoPower: echoPower, frames: frames, nearEndActive: true, clearTalker: true),
            amplitude: amplitude)
        #expect(clear >= doubleTalk + 6, "clear \(clear) dB, double talk \(doubleTalk) dB")
        #expect(doubleTalk > -18.5 && clear <= 0.05, "clear \(clear) dB, double talk \(doubleTalk) dB")
    }

    @Test func aTalkerWhoGoesOnForATenthOfASecondKeepsMoreOfItself() {
        // The same talker in double talk, three ways: as shipped; held at the first 100 ms's
        // over-subtraction (5×); and at the settled one (1×) from the start. Until the 20th hop of 5 ms,
        // the one that completes 100 ms, the shipped run is the held one sample for sample, so a short
        // mark of the detector is suppressed as before; later the talker is the settled run's, and at
        // least 6 dB above the held one.
        let amplitude: Float = 0.1
        let echoPower: Float = 60
        let frames = 200
        func talker(_ configure: @escaping (inout ResidualEchoSuppressor) -> Void) -> [Float] {
            run(
                amplitude: amplitude, echoPower: echoPower, frames: frames, nearEndActive: true, clearTalker: false,
                configure: configure)
        }
        let shipped = talker { _ in }
        let held = talker { $0.settledDoubleTalkOverSubtraction = $0.doubleTalkOverSubtraction }
        let settled = talker { $0.doubleTalkOverSubtraction = $0.settledDoubleTalkOverSubtraction }
        let settleSamples = Int(ResidualEchoSuppressor.doubleTalkSettleSeconds * Self.sampleRate)
        #expect(settleSamples == 20 * Self.frameLength / 2)
        let hop = Self.frameLength / 2
        #expect(Array(shipped.prefix(settleSamples - hop)) == Array(held.prefix(settleSamples - hop)))
        #expect(shipped[(settleSamples - hop)..<settleSamples] != held[(settleSamples - hop)..<settleSamples])
        let (shippedGain, heldGain, settledGain) = (
            talkerGain(shipped, amplitude: amplitude), talkerGain(held, amplitude: amplitude),
            talkerGain(settled, amplitude: amplitude)
        )
        print("talker in double talk: \(shippedGain) dB, held at 5× \(heldGain) dB, 1× throughout \(settledGain) dB")
        #expect(abs(shippedGain - settledGain) < 0.05, "\(shippedGain) dB against \(settledGain) dB")
        #expect(shippedGain >= heldGain + 6 && shippedGain <= 0.05, "\(shippedGain) dB, held \(heldGain) dB")
    }

    @Test func aTalkerFarAboveTheEchoIsKeptFromItsOnset() {
        // An echo estimate around 1 kHz, then a talker there starts: before any detector has marked the
        // near end, the hop itself shows a clear talker (an excess of about 40× the interference),
        // and its first 20 ms come through louder than under the far-end suppression (over-subtraction
        // 6, a-priori SNR smoothed over 95 ms).
        let amplitude: Float = 0.1
        let echoPower: Float = 5
        let onset = 20
        func onsetGain(instant: Bool) -> Double {
            let out = run(
                amplitude: amplitude, echoPower: echoPower, frames: onset + 4, nearEndActive: false,
                clearTalker: false, onsetFrame: onset, instant: instant, echoBand: 850...1150)
            // The output lags one hop: the talker's first 20 ms are frames onset … onset + 1, shifted.
            let start = onset * Self.frameLength + Self.frameLength / 2
            let level = meanSquare(out[start..<(start + 2 * Self.frameLength)])
            return decibels(level / Double(amplitude * amplitude / 2))
        }
        let instant = onsetGain(instant: true)
        let detectorOnly = onsetGain(instant: false)
        print("talker onset, first 20 ms: \(instant) dB at once, \(detectorOnly) dB under far-end suppression")
        #expect(instant >= detectorOnly + 2, "at once \(instant) dB, under far-end suppression \(detectorOnly) dB")
        #expect(instant <= 0.05)
    }

    @Test func theClearTalkerMarkMeansNothingWithoutANearEnd() {
        // Far-end talk only: the mark must not change a sample (the echo stays fully suppressed).
        let plain = run(amplitude: 0.1, echoPower: 2, frames: 50, nearEndActive: false, clearTalker: false)
        let marked = run(amplitude: 0.1, echoPower: 2, frames: 50, nearEndActive: false, clearTalker: true)
        #expect(plain == marked)
    }

    /// The far end excites 300 Hz … 3 kHz, where the filter leaves 9 % of the echo's power, and a steady
    /// 6 kHz component, where it leaves nothing: the broadband leakage (about 9 %) is the least leakage
    /// of the 6 kHz bins, whose own is near zero. Then a near talker at 6 kHz, 10 dB below that
    /// component's echo estimate, while the detector marks the near end. Runs both ways (the own leakage
    /// while the near end talks, or the floor everywhere) and returns the talker's level over the last
    /// half second, and the output of a far-end-only run.
    func runLeakageScene(ownLeakage: Bool, talker: Bool) -> (talkerGain: Double, output: [Float]) {
        var suppressor = ResidualEchoSuppressor(frameLength: Self.frameLength, sampleRate: Self.sampleRate)
        suppressor.nearEndOwnLeakage = ownLeakage
        defer { suppressor.deallocate() }
        let f = Self.frameLength
        let buffers = SuppressorBuffers(frameLength: f, binCount: suppressor.binCount)
        defer { buffers.deallocate() }
        let (error, echo, output, peak) = (buffers.error, buffers.echo, buffers.output, buffers.peak)
        peak.initialize(repeating: 0, count: suppressor.binCount)
        var random = SpeechLikeSignal(seed: 17)
        let tones = (0..<24).map { i in (300 + 115 * Double(i), 2 * EffectMath.pi * Double(random.noise())) }
        let learning = 300
        let frames = learning + 150
        let talkerAmplitude = Float(0.1 / 10.0.squareRoot())
        var out: [Float] = []
        for frame in 0..<frames {
            let nearEnd = talker && frame >= learning
            for n in 0..<f {
                let t = Double(frame * f + n) / Self.sampleRate
                // Four syllables a second over the band; a steady 6 kHz component.
                let envelope = 0.5 - 0.5 * EffectMath.cos(2 * EffectMath.pi * 4 * t)
                var band = 0.0
                for (frequency, phase) in tones { band += EffectMath.sin(2 * EffectMath.pi * frequency * t + phase) }
                let high = 0.1 * EffectMath.sin(2 * EffectMath.pi * 6000 * t)
                echo[n] = Float(0.05 * envelope * band + high)
                let near = nearEnd ? talkerAmplitude * Float(EffectMath.sin(2 * EffectMath.pi * 6000 * t + 1)) : 0
                error[n] = Float(0.3 * 0.05 * envelope * band) + near
            }
            suppressor.process(
                error: error, echo: echo, referencePeak: peak, referenceWeight: 0, farEndActive: true,
                nearEndActive: nearEnd, clearTalker: false, noiseSuppression: false, output: output)
            out += Array(UnsafeBufferPointer(start: output, count: f))
        }
        let tail = Array(out.suffix(Int(Self.sampleRate / 2)))
        let measured = Goertzel.amplitude(tail, frequency: 6000, sampleRate: Self.sampleRate)
        return (Decibels.fromAmplitude(measured / Double(talkerAmplitude)), out)
    }

    @Test func theNearTalkerIsSuppressedWithEachBinsOwnLeakage() {
        // Under the broadband floor the talker is held at the double-talk floor (−18 dB) where the filter
        // leaves nothing of the echo; with each bin's own leakage it keeps at least 6 dB more of itself
        // (−10 dB measured), never above unity.
        let own = runLeakageScene(ownLeakage: true, talker: true).talkerGain
        let floored = runLeakageScene(ownLeakage: false, talker: true).talkerGain
        print("talker at 6 kHz: \(own) dB with its bins' own leakage, \(floored) dB under the broadband floor")
        #expect(own >= floored + 6, "own leakage \(own) dB, broadband floor \(floored) dB")
        #expect(own <= 0.05)
    }

    @Test func farEndSingleTalkKeepsTheBroadbandFloor() {
        // Without a near end the choice changes no output sample.
        let own = runLeakageScene(ownLeakage: true, talker: false).output
        let floored = runLeakageScene(ownLeakage: false, talker: false).output
        #expect(own == floored)
    }
}

/// The share of the error the echo estimate explains (`errorEchoCoherence`), which finds a talker the
/// microphone's coherence with the echo (`echoCoherence`) hides when the talker is far below the echo.
@Suite struct ErrorEchoCoherenceTests {
    /// Mean coherences over the last half of 100 frames of `error(echo, talker)` against `echo`.
    func measure(_ error: (Float, Float, Float) -> Float) -> (error: Double, mic: Double) {
        let f = 480
        var suppressor = ResidualEchoSuppressor(frameLength: f, sampleRate: 48_000)
        defer { suppressor.deallocate() }
        let buffers = SuppressorBuffers(frameLength: f, binCount: suppressor.binCount)
        defer { buffers.deallocate() }
        buffers.peak.initialize(repeating: 0, count: suppressor.binCount)
        var farTalker = SpeechLikeSignal(seed: 8)
        var nearTalker = SpeechLikeSignal(seed: 9)
        let far = farTalker.make(count: 100 * f, sampleRate: 48_000, level: 0.1)
        let near = nearTalker.make(count: 100 * f, sampleRate: 48_000, level: 0.1)
        var previous: Float = 0
        var sums = (error: 0.0, mic: 0.0)
        for frame in 0..<100 {
            for n in 0..<f {
                buffers.echo[n] = far[frame * f + n]
                // What the filter missed of the echo: a linear function of it (this sample and the last).
                let missed = 0.6 * buffers.echo[n] - 0.3 * previous
                previous = buffers.echo[n]
                buffers.error[n] = error(buffers.echo[n], missed, near[frame * f + n])
            }
            suppressor.process(
                error: buffers.error, echo: buffers.echo, referencePeak: buffers.peak, referenceWeight: 0,
                farEndActive: true, nearEndActive: false, clearTalker: false, noiseSuppression: false,
                output: buffers.output)
            if frame >= 50 {
                sums.error += Double(suppressor.errorEchoCoherence) / 50
                sums.mic += Double(suppressor.echoCoherence) / 50
            }
        }
        return sums
    }

    @Test func residualEchoIsExplainedAndATalkerIsNot() {
        let residual = measure { _, missed, _ in 0.1 * missed }
        #expect(residual.error > 0.9, "residual echo alone: \(residual.error)")
        // Two independent signals read about 1/N over the measure's N ≈ 4 effective averages (25 ms of
        // 10 ms frames), the estimator's own bias; a speech talker against a speech echo reads less
        // (0.02–0.15 on the yardstick's double talk, docs/VOICE.md).
        let talker = measure { _, _, talker in talker }
        #expect(talker.error < 0.35, "a talker alone: \(talker.error)")
        // A talker 10 dB below the echo, and residual echo 20 dB below the talker: the microphone is
        // mostly echo, the error mostly the talker.
        let quiet = measure { _, missed, talker in 0.316 * talker + 0.1 * 0.316 * missed }
        #expect(quiet.mic > 0.9, "the microphone's coherence with the echo: \(quiet.mic)")
        #expect(quiet.error < 0.35, "the error's share explained by the echo: \(quiet.error)")
    }
}
