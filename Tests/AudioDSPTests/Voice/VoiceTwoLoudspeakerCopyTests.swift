@testable import AudioDSP
import CSpeexDSP
import Testing

/// `signal` through a sparse decaying response (`taps` samples, the direct sound at 0).
private func room(_ signal: [Float], taps: Int, seed: UInt64, gain: Float) -> [Float] {
    var random = SpeechLikeSignal(seed: seed)
    var response = [Float](repeating: 0, count: taps)
    response[0] = gain
    for k in stride(from: 3, to: taps, by: 3) {
        response[k] = gain * 0.5 * random.noise() * Float(EffectMath.exp(-4 * Double(k) / Double(taps)))
    }
    var out = [Float](repeating: 0, count: signal.count)
    for n in 0..<signal.count {
        var y: Float = 0
        for k in 0..<min(taps, n + 1) where response[k] != 0 { y += response[k] * signal[n - k] }
        out[n] = y
    }
    return out
}

@Suite struct VoiceTwoLoudspeakerCopyTests {
    /// The step's normalising power is kept frame by frame (the oldest partition out, the newest in) and
    /// summed again once per turn of the ring: after every frame of a signal that falls 80 dB and rises
    /// again, it equals the power summed over the ring whole, never below zero, and off by no more than
    /// rounding of the loudest bin of the last two turns (a loud passage's rounding lasts until the next
    /// whole sum).
    @Test func theRunningPowerEqualsTheRingsPower() {
        let f = 160
        var copy = VoiceTwoLoudspeakerCopy(frameLength: f, filterLength: 5 * f)
        defer { copy.deallocate() }
        let partitions = copy.partitionCount
        let bins = copy.binCount
        var random = SpeechLikeSignal(seed: 41)
        var peaks: [Float] = []
        var direct = [Float](repeating: 0, count: bins)
        for frame in 0..<(7 * partitions + 3) {
            let level: Float = (partitions..<(4 * partitions)).contains(frame) ? 1e-4 : 1
            let left = (0..<f).map { _ in level * random.noise() }
            let right = (0..<f).map { _ in 0.5 * level * random.noise() }
            copy.push(left: left, right: right)
            for k in 0..<bins { direct[k] = 0 }
            for channel in 0..<2 {
                let r = copy.ring(channel)
                for row in 0..<partitions {
                    for k in 0..<bins {
                        let i = row * bins + k
                        direct[k] += r.re[i] * r.re[i] + r.im[i] * r.im[i]
                    }
                }
            }
            peaks.append(direct.max() ?? 0)
            let recentPeak = peaks.suffix(2 * partitions).max() ?? 0
            var worst: Float = 0
            for k in 0..<bins {
                #expect(copy.power[k] >= 0)
                worst = max(worst, abs(copy.power[k] - direct[k]) - 1e-4 * direct[k])
            }
            #expect(worst <= 1e-5 * recentPeak, "frame \(frame): off by \(worst), loudest \(recentPeak)")
        }
    }

    /// Two loudspeakers' echo, without noise, as the MDF's echo estimate gives it: the copy learns both
    /// responses (370 and 300 taps over three partitions of 160-sample frames) and reproduces the echo to
    /// within 40 dB over the last 2 s, for two independent signals and for two mixes of them (a stereo
    /// mix, whose channels are correlated).
    @Test(arguments: [Float(0), 0.5])
    func itLearnsTwoRoomsFromTheEchoEstimate(mix: Float) {
        let fs = 16_000.0
        let f = 160
        let count = Int(12 * fs)
        var a = SpeechLikeSignal(seed: 31)
        var b = SpeechLikeSignal(seed: 32)
        let first = a.make(count: count, sampleRate: fs, level: 0.1)
        let second = b.make(count: count, sampleRate: fs, level: 0.1)
        let left = (0..<count).map { first[$0] + mix * second[$0] }
        let right = (0..<count).map { mix * first[$0] + second[$0] }
        let echoLeft = room(left, taps: 370, seed: 5, gain: 0.5)
        let echoRight = room(right, taps: 300, seed: 6, gain: -0.4)
        let echo = (0..<count).map { echoLeft[$0] + echoRight[$0] }
        var copy = VoiceTwoLoudspeakerCopy(frameLength: f, filterLength: 480)
        defer { copy.deallocate() }
        var estimate = [Float](repeating: 0, count: count)
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                echo.withUnsafeBufferPointer { e in
                    for frame in 0..<(count / f) {
                        let start = frame * f
                        copy.push(left: l.baseAddress! + start, right: r.baseAddress! + start)
                        for n in 0..<f { estimate[start + n] = copy.estimate[n] }
                        copy.learn(target: e.baseAddress! + start)
                    }
                }
            }
        }
        let tail = (count - Int(2 * fs))..<count
        let difference = tail.map { estimate[$0] - echo[$0] }
        let depth = decibels(meanSquare(echo[tail]) / meanSquare(difference[...]))
        #expect(copy.hasFilter)
        #expect(depth >= 40, "mix \(mix): the echo the copy leaves is \(depth) dB below the echo")
    }

    /// A frame the copy does not see (a folded reference) leaves its ring stale: it neither learns nor
    /// stands in for the MDF until the ring holds a filter's span of frames again.
    @Test func aSkippedFrameHoldsItBackUntilItsRingIsRefilled() {
        let f = 160
        var copy = VoiceTwoLoudspeakerCopy(frameLength: f, filterLength: 480)
        defer { copy.deallocate() }
        var source = SpeechLikeSignal(seed: 4)
        let x = source.make(count: 200 * f, sampleRate: 16_000, level: 0.1)
        x.withUnsafeBufferPointer { buffer in
            for frame in 0..<150 {
                copy.push(left: buffer.baseAddress! + frame * f, right: buffer.baseAddress! + frame * f)
                copy.learn(target: buffer.baseAddress! + frame * f)
            }
            #expect(copy.hasFilter)
            copy.skip()
            #expect(!copy.hasFilter)
            for frame in 150..<(150 + copy.partitionCount - 1) {
                copy.push(left: buffer.baseAddress! + frame * f, right: buffer.baseAddress! + frame * f)
            }
            #expect(!copy.hasFilter)
            copy.push(left: buffer.baseAddress!, right: buffer.baseAddress!)
            #expect(copy.hasFilter)
        }
    }
}

/// `signal` through a reverberant room: the direct sound after `delay` samples, then a dense tail that
/// decays by 60 dB in 0.25 s, over 140 ms (convolved by `VoiceForegroundFilter`, tested above).
private func reverberantPath(_ signal: [Float], delay: Int, sampleRate: Double, gain: Float, seed: UInt64) -> [Float] {
    let length = delay + Int(0.14 * sampleRate)
    var random = SpeechLikeSignal(seed: seed)
    var response = [Float](repeating: 0, count: length)
    response[delay] = gain
    for k in (delay + 1)..<length {
        let t = Double(k - delay) / sampleRate
        response[k] = gain * 0.05 * random.noise() * Float(EffectMath.exp(-6.9 * t / 0.25))
    }
    let f = 160
    var filter = VoiceForegroundFilter(frameLength: f, filterLength: length)
    defer { filter.deallocate() }
    filter.setFilter(length: length) { response[$0] }
    var out = [Float](repeating: 0, count: signal.count)
    signal.withUnsafeBufferPointer { x in
        for frame in 0..<(signal.count / f) {
            filter.push(x.baseAddress! + frame * f)
            for n in 0..<f { out[frame * f + n] = filter.estimate[n] }
        }
    }
    return out
}

@Suite struct VoiceTwoLoudspeakerDoubleTalkTests {
    /// Two loudspeakers play two different signals through two reverberant rooms (40 and 43 ms); after
    /// 12 s a near talker 10 dB above the echo talks for 4 s, and 0.5 s into it the two-loudspeaker MDF
    /// loses its filter (reset: the worst a talker can do to it). The linear stage's error (what the
    /// suppressor gets) keeps the echo down with the copy learned before the talker, which does not learn
    /// while the talker talks: from 1 s into the talk, at least 30 dB below the echo, and at least 20 dB
    /// more than the MDF's own error.
    @Test func theCopyHoldsTheEchoDownWhileTheNearEndTalks() {
        let fs = 16_000.0
        let count = Int(16 * fs)
        let talkStart = Int(12 * fs)
        var a = SpeechLikeSignal(seed: 41)
        var b = SpeechLikeSignal(seed: 42)
        let left = a.make(count: count, sampleRate: fs, level: 0.1)
        let right = b.make(count: count, sampleRate: fs, level: 0.1)
        let echoLeft = reverberantPath(left, delay: Int(0.040 * fs), sampleRate: fs, gain: 0.4, seed: 44)
        let echoRight = reverberantPath(right, delay: Int(0.043 * fs), sampleRate: fs, gain: 0.3, seed: 45)
        let echo = (0..<count).map { echoLeft[$0] + echoRight[$0] }
        var near = SpeechLikeSignal(seed: 43)
        let echoLevel = Float(meanSquare(echo[...]).squareRoot())
        let talker = near.make(count: count, sampleRate: fs, level: 3.2 * echoLevel).enumerated().map {
            $0 < talkStart ? 0 : $1
        }
        let mic = (0..<count).map { echo[$0] + talker[$0] }
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(
                agc: false, noiseSuppression: false, referenceChannels: 2, sampleRate: fs))
        let f = kernel.frameLength
        var error = [Float](repeating: 0, count: count)
        var filterError = [Float](repeating: 0, count: count)
        var start = 0
        _ = VoiceReferenceFoldingTests().run(kernel, mic: mic, left: left, right: right) {
            for n in 0..<f {
                error[start + n] = kernel.errorFrame[n]
                filterError[start + n] = Float(kernel.outputInterleaved[n]) / 32768
            }
            start += f
            if start == talkStart + Int(0.5 * fs) { speex_echo_state_reset(kernel.echoState) }
        }
        #expect(!kernel.referenceFolded)
        #expect(kernel.twoLoudspeakerCopy.hasFilter)
        let from = talkStart + Int(1 * fs)
        let withCopy = echoLeftInTheError(error, talker: talker, echo: echo, from: from, sampleRate: fs)
        let filterAlone = echoLeftInTheError(filterError, talker: talker, echo: echo, from: from, sampleRate: fs)
        #expect(withCopy >= 30, "echo in the linear stage's error in double talk: \(withCopy) dB down")
        #expect(
            withCopy >= filterAlone + 20,
            "the copy leaves the echo \(withCopy) dB down, the MDF \(filterAlone) dB")
    }
}
