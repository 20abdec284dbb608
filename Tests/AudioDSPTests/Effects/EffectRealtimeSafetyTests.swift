// Tests. Every render-side entry point of the effect kernels, called from another module as the graph
// layer will: `@_noLocks @_noAllocation` proves at compile time that they neither allocate, lock nor call
// code the checker cannot see (if a kernel regresses, this file stops compiling); the test below counts
// allocations and locks at run time.
import AudioDSP
import DSPTestSupport
import Testing

@_noLocks @_noAllocation
func renderEQ(_ k: UnsafeMutablePointer<EQKernel>, _ bus: BusRef, frames: Int) {
    k.pointee.setBandFilterType(0, .resonantHighShelf)
    k.pointee.setBandFrequency(0, 440)
    k.pointee.setBandBandwidth(0, 1)
    k.pointee.setBandGain(0, decibels: 3)
    k.pointee.setBandBypass(0, false)
    k.pointee.setGlobalGain(decibels: -3)
    k.pointee.setParameter(3, value: 2)
    k.pointee.setBypass(false)
    k.pointee.process(input: bus, output: bus, frames: frames)
    k.pointee.reset()
}

@_noLocks @_noAllocation
func renderDelay(_ k: UnsafeMutablePointer<DelayKernel>, _ bus: BusRef, frames: Int) {
    k.pointee.setDelayTime(0.25)
    k.pointee.setFeedback(percent: -40)
    k.pointee.setLowPassCutoff(2000)
    k.pointee.setWetDryMix(percent: 50)
    k.pointee.setParameter(0, value: 0.5)
    k.pointee.setBypass(false)
    k.pointee.process(input: bus, output: bus, frames: frames)
    k.pointee.reset()
}

@_noLocks @_noAllocation
func renderReverb(_ k: UnsafeMutablePointer<ReverbKernel>, _ bus: BusRef, frames: Int) {
    k.pointee.setPreset(.cathedral)
    k.pointee.setWetDryMix(percent: 30)
    k.pointee.setParameter(1, value: 4)
    k.pointee.setBypass(false)
    k.pointee.process(input: bus, output: bus, frames: frames)
    k.pointee.reset()
}

@_noLocks @_noAllocation
func renderDistortion(_ k: UnsafeMutablePointer<DistortionKernel>, _ bus: BusRef, frames: Int) {
    k.pointee.setPreset(.speechWaves)
    k.pointee.setPreGain(decibels: 3)
    k.pointee.setWetDryMix(percent: 70)
    k.pointee.setParameter(2, value: 5)
    k.pointee.setBypass(false)
    k.pointee.process(input: bus, output: bus, frames: frames)
    k.pointee.reset()
}

/// The same entry points at run time: after the kernels are allocated and run once, a thread running them
/// (with parameter changes, preset switches, bypass and reset) makes no heap allocation and takes no lock.
@Suite(.serialized) struct EffectRealtimeSafetyTests {
    @Test func renderEntryPointsNeitherAllocateNorLock() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        let frames = 128
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        buffer.initialize(repeating: 0.25, count: 2 * frames)
        let bus = BusRef(data: buffer, channelCount: 2, stride: frames)
        let eq = UnsafeMutablePointer<EQKernel>.allocate(capacity: 1)
        eq.initialize(to: EQKernel(sampleRate: 48_000, maxBlockFrames: frames, channelCount: 2, bandCount: 16))
        let delay = UnsafeMutablePointer<DelayKernel>.allocate(capacity: 1)
        delay.initialize(to: DelayKernel(sampleRate: 48_000, maxBlockFrames: frames, channelCount: 2))
        let reverb = UnsafeMutablePointer<ReverbKernel>.allocate(capacity: 1)
        reverb.initialize(to: ReverbKernel(sampleRate: 48_000, maxBlockFrames: frames, channelCount: 2))
        let distortion = UnsafeMutablePointer<DistortionKernel>.allocate(capacity: 1)
        distortion.initialize(to: DistortionKernel(sampleRate: 48_000, maxBlockFrames: frames, channelCount: 2))
        defer {
            eq.pointee.deallocate()
            delay.pointee.deallocate()
            reverb.pointee.deallocate()
            distortion.pointee.deallocate()
            eq.deallocate()
            delay.deallocate()
            reverb.deallocate()
            distortion.deallocate()
            buffer.deallocate()
        }
        // One pass first: the first call of an entry point in this process may take a lock of the Swift
        // runtime's once (its metadata or a global's initialiser), which a test run before it in the same
        // process may or may not have taken already.
        renderEQ(eq, bus, frames: frames)
        renderDelay(delay, bus, frames: frames)
        renderReverb(reverb, bus, frames: frames)
        renderDistortion(distortion, bus, frames: frames)
        let probe = AllocationProbe()
        probe.trackCurrentThread(true)
        let before = (probe.allocations, probe.locks)
        for _ in 0..<200 {
            renderEQ(eq, bus, frames: frames)
            renderDelay(delay, bus, frames: frames)
            renderReverb(reverb, bus, frames: frames)
            renderDistortion(distortion, bus, frames: frames)
        }
        let after = (probe.allocations, probe.locks)
        probe.trackCurrentThread(false)
        #expect(after.0 == before.0, "allocations on the render path")
        #expect(after.1 == before.1, "locks on the render path")
    }
}
