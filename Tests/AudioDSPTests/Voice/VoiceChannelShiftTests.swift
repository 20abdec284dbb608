@testable import AudioDSP
import DSPTestSupport
import Testing

/// `signal` delayed by `delay` samples through a room: the direct sound, then a dense tail decaying
/// 40 dB over `tailSeconds`.
private func room(_ signal: [Float], delay: Int, tailSeconds: Double, sampleRate: Double, seed: UInt64) -> [Float] {
    var random = SpeechLikeSignal(seed: seed)
    let tail = Int(tailSeconds * sampleRate)
    var taps: [(Int, Float)] = [(delay, 0.5)]
    for k in stride(from: 4, to: tail, by: 4) {
        let decay = Float(EffectMath.exp(-4.6 * Double(k) / Double(tail)))
        taps.append((delay + k, 0.2 * decay * random.noise()))
    }
    var out = [Float](repeating: 0, count: signal.count)
    for (lag, gain) in taps {
        for n in lag..<signal.count { out[n] += gain * signal[n - lag] }
    }
    return out
}

/// The farther of two loudspeakers that play different signals is delayed on its channel, so that the
/// filter covers both rooms from their start.
@Suite struct VoiceChannelShiftTests {
    let fs = 16_000.0

    /// Runs the kernel (one microphone, two reference channels, noise suppression off) over whole
    /// signals; returns the output, the first frame after which a channel was shifted (nil if none) and the
    /// MDF's own ERLE (`linearErleDb`) after each frame. With `probe`, every `process` call from the 20th
    /// frame on is counted (allocations and locks on this thread).
    func run(
        _ kernel: VoiceProcessorKernel, mic: [Float], left: [Float], right: [Float], probe: AllocationProbe? = nil
    ) -> ([Float], Int?, [Float]) {
        var shiftedAt: Int?
        var linear: [Float] = []
        let output = processWithTwoReferences(
            kernel, mic: mic, left: left, right: right,
            around: { frame, process in
                if frame >= 20 { probe?.trackCurrentThread(true) }
                process()
                probe?.trackCurrentThread(false)
            },
            afterFrame: { frame in
                if shiftedAt == nil && kernel.channelShiftFrames > 0 { shiftedAt = frame }
                linear.append(kernel.linearErleDb)
            })
        return (output, shiftedAt, linear)
    }

    func kernel() -> VoiceProcessorKernel {
        VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: false, noiseSuppression: false, referenceChannels: 2, sampleRate: fs))
    }

    /// Two talkers on loudspeakers 20 and 70 ms away, each room 150 ms long: on the nearer one's delay the
    /// 155 ms filter would end 100 ms into the farther room. The farther loudspeaker's channel is found
    /// (on either side) and delayed by the 50 ms within 3 s. Over the last 4 s of 16, against the same
    /// processor with the shift turned off and one given that channel 50 ms late by hand (whose two rooms
    /// then start together, and which shifts nothing): the MDF's own ERLE gains at least half of what the
    /// by-hand processor's gains, and the output's ERLE gains at least 12 dB and reaches 50 dB. Counted
    /// from the 20th frame, through the shift, `process` allocates nothing and takes no lock.
    @Test(arguments: [0, 1])
    func theFartherLoudspeakersChannelIsDelayedToTheNearerOnes(farChannel: Int) {
        let count = Int(16 * fs)
        var first = SpeechLikeSignal(seed: 61)
        var second = SpeechLikeSignal(seed: 62)
        let near = first.make(count: count, sampleRate: fs, level: 0.05)
        let far = second.make(count: count, sampleRate: fs, level: 0.05)
        let nearDelay = Int(0.020 * fs)
        let gap = Int(0.050 * fs)
        let mic = zip(
            room(near, delay: nearDelay, tailSeconds: 0.15, sampleRate: fs, seed: 71),
            room(far, delay: nearDelay + gap, tailSeconds: 0.15, sampleRate: fs, seed: 72)
        ).map { $0 + $1 }
        let (left, right) = farChannel == 1 ? (near, far) : (far, near)
        let shifting = kernel()
        // The shift, the trackers' fresh start and the MDF's reset allocate nothing and take no lock.
        let probe = AllocationProbe.isActive && !AllocationProbe.isSanitized ? AllocationProbe() : nil
        let (output, shiftedAt, linear) = run(shifting, mic: mic, left: left, right: right, probe: probe)
        if let probe {
            #expect(probe.allocations == 0, "allocations in process")
            #expect(probe.locks == 0, "locks in process")
        }
        #expect(shifting.farChannel == farChannel)
        #expect(shifting.channelShiftFrames == gap / shifting.frameLength)
        #expect((shiftedAt ?? .max) * shifting.frameLength <= Int(3 * fs), "shifted after frame \(shiftedAt ?? -1)")
        // By hand: the farther signal given 50 ms late, its room 50 ms earlier.
        let late = [Float](repeating: 0, count: gap) + far.prefix(count - gap)
        let (lateLeft, lateRight) = farChannel == 1 ? (near, late) : (late, near)
        let byHand = kernel()
        let (reference, referenceShiftedAt, linearByHand) = run(byHand, mic: mic, left: lateLeft, right: lateRight)
        #expect(referenceShiftedAt == nil)
        let last = (count - 4 * Int(fs))..<count
        let erle = decibels(meanSquare(mic[last]) / meanSquare(output[last]))
        let erleByHand = decibels(meanSquare(mic[last]) / meanSquare(reference[last]))
        let f = shifting.frameLength
        let mean = { (x: [Float]) in x[(last.lowerBound / f)...].reduce(0, +) / Float(x.count - last.lowerBound / f) }
        let unshifted = kernel()
        unshifted.allowsChannelShift = false
        let (plain, _, linearPlain) = run(unshifted, mic: mic, left: left, right: right)
        let erlePlain = decibels(meanSquare(mic[last]) / meanSquare(plain[last]))
        // The MDF's own ERLE gains at least half of what the channel given late by hand gains over it
        // (measured 10–12 of 18 dB: the shift restarts the MDF), and so does what the user hears.
        let gain = mean(linear) - mean(linearPlain)
        let gainByHand = mean(linearByHand) - mean(linearPlain)
        #expect(
            gain >= 0.5 * gainByHand,
            "MDF ERLE \(mean(linear)) dB, by hand \(mean(linearByHand)), unshifted \(mean(linearPlain))")
        #expect(erle >= erlePlain + 12, "ERLE \(erle) dB, unshifted \(erlePlain) dB, by hand \(erleByHand) dB")
        #expect(erle >= 50, "ERLE \(erle) dB")
    }

    /// Two talkers on loudspeakers 20 and 70 ms away for 8 s, then one talker on both for 3 s (the
    /// reference folds), then two again: the shift made in the first part stays through the fold and
    /// applies again when the reference unfolds, so the two-loudspeaker filter, kept while the folded
    /// one ran, still fits: at least 22 dB of ERLE over the first 2 s after the fold (27.1 measured;
    /// 14.7 when a fold dropped the shift).
    @Test func aShiftOutlastsAFold() {
        let count = Int(16 * fs)
        let fold = Int(8 * fs)..<Int(11 * fs)
        var first = SpeechLikeSignal(seed: 65)
        var second = SpeechLikeSignal(seed: 66)
        let near = first.make(count: count, sampleRate: fs, level: 0.05)
        let other = second.make(count: count, sampleRate: fs, level: 0.05)
        let far = (0..<count).map { fold.contains($0) ? near[$0] : other[$0] }
        let mic = zip(
            room(near, delay: Int(0.020 * fs), tailSeconds: 0.15, sampleRate: fs, seed: 75),
            room(far, delay: Int(0.070 * fs), tailSeconds: 0.15, sampleRate: fs, seed: 76)
        ).map { $0 + $1 }
        let processor = kernel()
        var folded = false
        var shiftAfterFold = 0
        let output = processWithTwoReferences(
            processor, mic: mic, left: near, right: far,
            afterFrame: { frame in
                folded = folded || processor.referenceFolded
                if frame * processor.frameLength == fold.upperBound + Int(fs) {
                    shiftAfterFold = processor.channelShiftFrames
                }
            })
        #expect(folded, "the reference folded")
        #expect(shiftAfterFold == 5 && processor.farChannel == 1)
        let after = fold.upperBound..<(fold.upperBound + 2 * Int(fs))
        let erle = decibels(meanSquare(mic[after]) / meanSquare(output[after]))
        #expect(erle >= 22, "ERLE \(erle) dB over the 2 s after the fold")
    }

    /// Loudspeakers 15 ms apart (under the 25 ms of a three-frame shift): nothing is shifted.
    @Test func closerLoudspeakersAreNotShifted() {
        let count = Int(6 * fs)
        var first = SpeechLikeSignal(seed: 63)
        var second = SpeechLikeSignal(seed: 64)
        let left = first.make(count: count, sampleRate: fs, level: 0.05)
        let right = second.make(count: count, sampleRate: fs, level: 0.05)
        let mic = zip(
            room(left, delay: Int(0.020 * fs), tailSeconds: 0.1, sampleRate: fs, seed: 73),
            room(right, delay: Int(0.035 * fs), tailSeconds: 0.1, sampleRate: fs, seed: 74)
        ).map { $0 + $1 }
        let processor = kernel()
        let (_, shiftedAt, _) = run(processor, mic: mic, left: left, right: right)
        #expect(shiftedAt == nil)
    }
}

/// The parts a shift uses: the tracker's fresh start and the partitioned filter moved earlier.
@Suite struct VoiceChannelShiftPartsTests {
    /// A tracker that heard one echo path (40 ms), then `reset`, then another (90 ms) gives, after every
    /// block of the second, exactly what a new tracker given only the second gives.
    @Test func aResetTrackerIsANewOne() {
        let fs = 16_000.0
        let count = Int(3 * fs)
        var talker = SpeechLikeSignal(seed: 81)
        let reference = talker.make(count: count, sampleRate: fs, level: 0.05)
        let before = echoPath(reference, delay: Int(0.040 * fs), sampleRate: fs, gain: 0.5)
        let after = echoPath(reference, delay: Int(0.090 * fs), sampleRate: fs, gain: 0.5)
        var used = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: 0.5)
        var fresh = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: 0.5)
        defer {
            used.deallocate()
            fresh.deallocate()
        }
        reference.withUnsafeBufferPointer { r in
            before.withUnsafeBufferPointer { m in
                used.push(reference: r.baseAddress!, mic: m.baseAddress!, count: count)
            }
        }
        #expect(abs(used.delayMilliseconds - 40) <= 1)
        used.reset()
        var delays: [(Double, Double)] = []
        reference.withUnsafeBufferPointer { r in
            after.withUnsafeBufferPointer { m in
                for start in stride(from: 0, to: count, by: 160) {
                    used.push(reference: r.baseAddress! + start, mic: m.baseAddress! + start, count: 160)
                    fresh.push(reference: r.baseAddress! + start, mic: m.baseAddress! + start, count: 160)
                    delays.append((used.delaySamples, fresh.delaySamples))
                    #expect(used.agreements == fresh.agreements && used.confidence == fresh.confidence)
                }
            }
        }
        #expect(delays.allSatisfy { $0.0 == $0.1 })
        #expect(abs(used.delayMilliseconds - 90) <= 1)
    }

    /// A response whose first two partitions are silent, moved two frames earlier, convolved with the
    /// signal two frames late, gives what the response gives with the signal on time (overlap-save, so to
    /// rounding), frame after frame.
    @Test func aResponseMovedEarlierMatchesASignalMovedLater() {
        let f = 64
        let shift = 2
        var first = PartitionedConvolution(frameLength: f, filterLength: 6 * f)
        var moved = PartitionedConvolution(frameLength: f, filterLength: 6 * f)
        defer {
            first.deallocate()
            moved.deallocate()
        }
        var random = SpeechLikeSignal(seed: 83)
        let response = (0..<(6 * f)).map { i -> Float in
            i < shift * f ? 0 : random.noise() * Float(EffectMath.exp(-Double(i) / Double(2 * f)))
        }
        first.setFilter(length: response.count) { response[$0] }
        moved.setFilter(length: response.count) { response[$0] }
        moved.advance(byFrames: shift)
        let frames = 20
        let signal = (0..<(frames * f)).map { _ in random.noise() }
        let late = [Float](repeating: 0, count: shift * f) + signal
        let partitions = first.partitionCount
        let bins = first.binCount
        let window = UnsafeMutablePointer<Float>.allocate(capacity: 2 * first.fftSize)
        window.initialize(repeating: 0, count: 2 * first.fftSize)
        let ringRe = UnsafeMutablePointer<Float>.allocate(capacity: 2 * partitions * bins)
        ringRe.initialize(repeating: 0, count: 2 * partitions * bins)
        let ringIm = UnsafeMutablePointer<Float>.allocate(capacity: 2 * partitions * bins)
        ringIm.initialize(repeating: 0, count: 2 * partitions * bins)
        let outputs = UnsafeMutablePointer<Float>.allocate(capacity: 2 * f)
        defer {
            window.deallocate()
            ringRe.deallocate()
            ringIm.deallocate()
            outputs.deallocate()
        }
        var newest = 0
        var largest: Float = 0
        var peak: Float = 0
        for frame in 0..<frames {
            newest = (newest + partitions - 1) % partitions
            for (index, (filter, input)) in [(first, signal), (moved, late)].enumerated() {
                let offset = index * partitions * bins
                input.withUnsafeBufferPointer { x in
                    filter.slide(
                        window + index * first.fftSize, by: x.baseAddress! + frame * f, ringRe: ringRe + offset,
                        ringIm: ringIm + offset, row: newest)
                }
                filter.apply(
                    ringRe: ringRe + offset, ringIm: ringIm + offset, newest: newest, into: outputs + index * f)
            }
            for n in 0..<f {
                largest = max(largest, abs(outputs[n] - outputs[f + n]))
                peak = max(peak, abs(outputs[n]))
            }
        }
        #expect(peak > 0.1)
        #expect(largest <= 1e-4 * peak, "largest difference \(largest) of \(peak)")
    }
}
