// Tests. Every render-side entry point of the spatial kernels, and the geometry a render-side setter may
// compute, called from another module as the graph layer will: `@_noLocks @_noAllocation` proves at
// compile time that they neither allocate, lock nor call code the checker cannot see (libm included);
// the test below counts allocations and locks at run time.
import AudioDSP
import DSPTestSupport
import Testing

/// Geometry and gains from world positions, as a render-side update would compute them.
@_noLocks @_noAllocation
func spatialUpdateMath(_ position: SpatialVector, _ orientation: UnsafeMutablePointer<ListenerOrientation>)
    -> (SourceDirection, Float, Double)
{
    orientation.pointee.setAngles(yawDegrees: 12, pitchDegrees: -3, rollDegrees: 1)
    _ = orientation.pointee.setVectors(forward: SpatialVector(0.1, 0, -1), up: SpatialVector(0, 1, 0.05))
    let direction = SourceDirection(
        source: position, listener: SpatialVector(0, 1, 0), orientation: orientation.pointee)
    let distance = DistanceAttenuation(
        model: .exponentClamped, referenceDistance: 1, maximumDistance: 50, rolloffFactor: 1.2)
    let cone = ConeAttenuation(innerAngleDegrees: 90, outerAngleDegrees: 200, outerGain: 0.3)
    let gain =
        distance.gain(distance: direction.distance)
        * cone.gain(source: position, direction: SpatialVector(0, 0, 1), listener: SpatialVector(0, 1, 0))
    let ratio = DopplerShift().pitchRatio(
        sourcePosition: position, sourceVelocity: SpatialVector(3, 0, 4), listenerPosition: .zero,
        listenerVelocity: SpatialVector(0, 0, -1))
    return (direction, Float(gain), ratio + direction.azimuth + direction.elevation)
}

@_noLocks @_noAllocation
func renderEqualPower(
    _ k: UnsafeMutablePointer<EqualPowerPanningKernel>, _ x: UnsafePointer<Float>, _ bus: BusRef,
    _ d: SourceDirection, frames: Int
) {
    k.pointee.setDirection(d, gain: 0.5, rampFrames: 800)
    k.pointee.process(input: x, output: bus, frames: frames)
}

@_noLocks @_noAllocation
func renderSphericalHead(
    _ k: UnsafeMutablePointer<SphericalHeadKernel>, _ x: UnsafePointer<Float>, _ bus: BusRef,
    _ d: SourceDirection, frames: Int
) {
    k.pointee.setDirection(d, gain: 0.5, rampFrames: 800)
    k.pointee.process(input: x, output: bus, frames: frames)
}

@_noLocks @_noAllocation
func renderVBAP(
    _ k: UnsafeMutablePointer<VBAPKernel>, _ x: UnsafePointer<Float>, _ bus: BusRef,
    _ d: SourceDirection, frames: Int
) {
    k.pointee.setDirection(d, gain: 0.5, rampFrames: 800)
    k.pointee.process(input: x, output: bus, frames: frames)
}

@_noLocks @_noAllocation
func renderSoundField(
    _ e: UnsafeMutablePointer<AmbisonicEncoder>, _ decoder: AmbisonicDecoder,
    _ x: UnsafePointer<Float>, _ bformat: BusRef, _ bus: BusRef, _ d: SourceDirection, frames: Int
) {
    e.pointee.setDirection(d, gain: 0.5, rampFrames: 800)
    e.pointee.process(input: x, bformat: bformat, frames: frames)
    decoder.process(bformat: bformat, output: bus, frames: frames)
}

@_noLocks @_noAllocation
func renderHRTF(_ k: UnsafeMutablePointer<HRTFConvolver>, _ x: UnsafePointer<Float>, _ bus: BusRef, frames: Int) {
    k.pointee.setGain(0.5, rampFrames: 800)
    k.pointee.process(input: x, output: bus, frames: frames)
}

/// The control side's hand-over of a new HRIR pair is lock- and allocation-free too.
@_noLocks @_noAllocation
func publishHRIR(_ exchange: HRIRExchange, _ taps: UnsafePointer<Float>, count: Int, delay: Double) {
    exchange.writableSlot.setFilters(left: taps, right: taps, count: count, leftDelay: delay, rightDelay: delay + 3)
    exchange.publish()
}

@_noLocks @_noAllocation
func renderPassThroughAndSends(
    _ p: UnsafeMutablePointer<PassThroughKernel>, _ f: UnsafeMutablePointer<SourceEnvironmentFilter>,
    _ r: UnsafeMutablePointer<DopplerResampler>, _ x: UnsafeMutablePointer<Float>, _ bus: BusRef,
    frames: Int
) {
    r.pointee.setPitchRatio(1.03, rampFrames: 800)
    r.pointee.process(input: x, output: x, frames: frames)
    f.pointee.setParameters(reverbBlend: 0.4, obstructionDecibels: -12, occlusionDecibels: -6, rampFrames: 800)
    f.pointee.process(input: x, direct: x, reverbSend: bus.channel(1), frames: frames)
    p.pointee.setGain(0.8, rampFrames: 800)
    p.pointee.process(input: BusRef(data: x, channelCount: 1, stride: frames), output: bus, frames: frames)
}

@_noLocks @_noAllocation
func resetSpatialKernels(
    _ a: UnsafeMutablePointer<SphericalHeadKernel>, _ b: UnsafeMutablePointer<HRTFConvolver>,
    _ c: UnsafeMutablePointer<DopplerResampler>, _ d: UnsafeMutablePointer<SourceEnvironmentFilter>
) {
    a.pointee.reset()
    b.pointee.reset()
    c.pointee.reset()
    d.pointee.reset()
}

/// The same entry points at run time: after allocation and a warm-up (the first calls of a debug build
/// may instantiate generic metadata, which allocates once per process), a thread running them with
/// moving sources, HRIR hand-overs and resets makes no heap allocation and takes no lock.
@Suite(.serialized) struct SpatialRealtimeSafetyTests {
    @Test func renderEntryPointsNeitherAllocateNorLock() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        let frames = 128
        let x = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 8 * frames)
        let bf = UnsafeMutablePointer<Float>.allocate(capacity: 4 * frames)
        let taps = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        taps.initialize(repeating: 0.1, count: 64)
        let bus = BusRef(data: out, channelCount: 8, stride: frames)
        let bformat = BusRef(data: bf, channelCount: 4, stride: frames)
        let orientation = UnsafeMutablePointer<ListenerOrientation>.allocate(capacity: 1)
        orientation.initialize(to: ListenerOrientation())
        let equalPower = UnsafeMutablePointer<EqualPowerPanningKernel>.allocate(capacity: 1)
        equalPower.initialize(to: EqualPowerPanningKernel())
        let head = UnsafeMutablePointer<SphericalHeadKernel>.allocate(capacity: 1)
        head.initialize(to: SphericalHeadKernel(sampleRate: 48_000))
        let vbap = UnsafeMutablePointer<VBAPKernel>.allocate(capacity: 1)
        vbap.initialize(to: VBAPKernel(layout: .surround71))
        let encoder = UnsafeMutablePointer<AmbisonicEncoder>.allocate(capacity: 1)
        encoder.initialize(to: AmbisonicEncoder())
        let decoder = AmbisonicDecoder(layout: .surround51)
        let hrtf = UnsafeMutablePointer<HRTFConvolver>.allocate(capacity: 1)
        hrtf.initialize(
            to: HRTFConvolver(
                sampleRate: 48_000, maxBlockFrames: frames, filterLength: 64,
                maximumDelayFrames: 48, crossfadeFrames: 128))
        let pass = UnsafeMutablePointer<PassThroughKernel>.allocate(capacity: 1)
        pass.initialize(to: PassThroughKernel())
        let sends = UnsafeMutablePointer<SourceEnvironmentFilter>.allocate(capacity: 1)
        sends.initialize(to: SourceEnvironmentFilter(sampleRate: 48_000))
        let doppler = UnsafeMutablePointer<DopplerResampler>.allocate(capacity: 1)
        doppler.initialize(to: DopplerResampler(sampleRate: 48_000))
        defer {
            head.pointee.deallocate()
            vbap.pointee.deallocate()
            decoder.deallocate()
            hrtf.pointee.deallocate()
            doppler.pointee.deallocate()
            for p in [x, out, bf, taps] { p.deallocate() }
            orientation.deallocate()
            equalPower.deallocate()
            head.deallocate()
            vbap.deallocate()
            encoder.deallocate()
            hrtf.deallocate()
            pass.deallocate()
            sends.deallocate()
            doppler.deallocate()
        }
        let probe = AllocationProbe()
        for block in 0..<300 {
            probe.trackCurrentThread(block >= 10)
            for i in 0..<frames { x[i] = Float((block * frames + i) % 97) / 97 - 0.5 }
            out.update(repeating: 0, count: 8 * frames)
            bf.update(repeating: 0, count: 4 * frames)
            let (d, _, _) = spatialUpdateMath(SpatialVector(Double(block % 7) - 3, 0.5, -2), orientation)
            renderEqualPower(equalPower, x, bus, d, frames: frames)
            renderSphericalHead(head, x, bus, d, frames: frames)
            renderVBAP(vbap, x, bus, d, frames: frames)
            renderSoundField(encoder, decoder, x, bformat, bus, d, frames: frames)
            if block % 6 == 0 { publishHRIR(hrtf.pointee.exchange, taps, count: 64, delay: Double(block % 11)) }
            renderHRTF(hrtf, x, bus, frames: frames)
            renderPassThroughAndSends(pass, sends, doppler, x, bus, frames: frames)
            if block % 100 == 99 { resetSpatialKernels(head, hrtf, doppler, sends) }
            probe.trackCurrentThread(false)
        }
        #expect(probe.allocations == 0, "allocations on the render path")
        #expect(probe.locks == 0, "locks on the render path")
    }
}
