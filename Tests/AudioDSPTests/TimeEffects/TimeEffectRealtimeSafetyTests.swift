// Tests. Real-time safety of the time effects, called from another module as the graph layer will.
// `@_noLocks @_noAllocation` proves at compile time that the varispeed's entry points, and the pure-Swift
// entry points of the time-pitch kernel, neither allocate, lock nor call code the checker cannot see.
// `TimePitchKernel.push` calls the Rubber Band C API, which the checker cannot see into, so the tests
// below count allocations and locks at run time, while sweeping rate and pitch over their whole ranges.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@_noLocks @_noAllocation
func renderVarispeed(_ k: UnsafeMutablePointer<VarispeedKernel>, _ input: BusRef, _ output: BusRef, frames: Int) {
    k.pointee.setParameter(0, value: 1.5)
    k.pointee.setRate(0.75)
    k.pointee.setBypass(false)
    while case let wanted = k.pointee.inputFramesWanted(outputFrames: frames), wanted > 0 {
        k.pointee.push(input, frames: wanted)
    }
    k.pointee.pull(output, frames: frames)
    k.pointee.reset()
}

@_noLocks @_noAllocation
func controlTimePitch(_ k: UnsafeMutablePointer<TimePitchKernel>, frames: Int) -> Int {
    k.pointee.setParameter(0, value: 2)
    k.pointee.setParameter(1, value: -300)
    k.pointee.setParameter(2, value: 12)
    k.pointee.setRate(0.5)
    k.pointee.setPitch(cents: 700)
    k.pointee.setBypass(false)
    k.pointee.reset()
    k.pointee.setInsertTiming(true)
    k.pointee.setInsertTiming(false)
    return k.pointee.inputFramesWanted(outputFrames: frames)
}

@Suite(.serialized) struct TimeEffectRealtimeSafetyTests {
    /// Runs the host loop for `blocks` blocks with `change(block)` before each, counting the calling
    /// thread's allocations and locks from block `warmUp` on.
    static func count<K: PullKernelUnderTest>(
        _ kernel: inout K, blocks: Int, warmUp: Int, frames: Int = 128, change: (inout K, Int) -> Void
    ) -> (allocations: Int64, locks: Int64) {
        let channels = kernel.channelCount
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * channels * kernel.maxBlockFrames)
        defer { buffer.deallocate() }
        var rng = SeededRandom(seed: 99)
        for i in 0..<(2 * channels * kernel.maxBlockFrames) { buffer[i] = rng.nextFloat() * 0.5 }
        let input = BusRef(data: buffer, channelCount: channels, stride: kernel.maxBlockFrames)
        let output = BusRef(
            data: buffer + channels * kernel.maxBlockFrames, channelCount: channels, stride: kernel.maxBlockFrames)
        let probe = AllocationProbe()
        for block in 0..<blocks {
            if block == warmUp {
                probe.reset()
                probe.trackCurrentThread(true)
            }
            change(&kernel, block)
            while case let wanted = kernel.inputFramesWanted(outputFrames: frames), wanted > 0 {
                kernel.push(input, frames: wanted)
            }
            kernel.pull(output, frames: frames)
        }
        probe.trackCurrentThread(false)
        return (probe.allocations, probe.locks)
    }

    /// After one second of warm-up, 20 s of time-pitch processing with rate and pitch jumping to random
    /// values across their whole ranges (extremes included) every 50 ms, gliding in between, plus bypass
    /// toggles and resets, make no allocation and take no lock, in Rubber Band included.
    @Test func timePitchNeitherAllocatesNorLocksWhileSweeping() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        var k = TimePitchKernel(sampleRate: 48_000, maxBlockFrames: 128, channelCount: 2)
        defer { k.deallocate() }
        var rng = SeededRandom(seed: 7)
        let pointer = UnsafeMutablePointer<TimePitchKernel>.allocate(capacity: 1)
        defer { pointer.deallocate() }
        let extremes: [(Double, Double)] = [(32, 2400), (1.0 / 32, -2400), (32, -2400), (1.0 / 32, 2400)]
        let counts = Self.count(&k, blocks: 375 * 21, warmUp: 375) { k, block in
            guard block >= 375 && block % 19 == 0 else { return }
            let step = block / 19
            if step < 8 {
                let (rate, cents) = extremes[step % 4]
                k.setRate(rate)
                k.setPitch(cents: cents)
            } else {
                k.setRate(pow(2, Double(rng.nextInt(0..<1001)) / 100 - 5))
                k.setPitch(cents: Double(rng.nextInt(-2400..<2401)))
            }
            if step % 97 == 0 { k.setBypass(!k.isBypassed) }
            if step % 211 == 0 { k.reset() }
            if step % 13 == 0 {
                pointer.initialize(to: k)
                _ = controlTimePitch(pointer, frames: 128)
                k = pointer.move()
            }
        }
        #expect(counts.allocations == 0, "allocations on the render path")
        #expect(counts.locks == 0, "locks on the render path")
        #expect(k.underrunFrames < 48_000, "underruns \(k.underrunFrames) (only after resets and at rate 32)")
    }

    /// The same for the varispeed (whose entry points the compiler also checks, above).
    @Test func varispeedNeitherAllocatesNorLocks() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        var k = VarispeedKernel(sampleRate: 48_000, maxBlockFrames: 128, channelCount: 2)
        defer { k.deallocate() }
        var rng = SeededRandom(seed: 8)
        let counts = Self.count(&k, blocks: 375 * 11, warmUp: 375) { k, block in
            guard block % 7 == 0 else { return }
            k.setRate(0.25 + Double(rng.nextInt(0..<376)) / 100)
            if block % 301 == 0 { k.setBypass(!k.isBypassed) }
            if block % 1001 == 0 { k.reset() }
        }
        #expect(counts.allocations == 0)
        #expect(counts.locks == 0)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0.1, count: 512)
        let pointer = UnsafeMutablePointer<VarispeedKernel>.allocate(capacity: 1)
        defer { pointer.deallocate() }
        pointer.initialize(to: k)
        renderVarispeed(
            pointer, BusRef(data: buffer, channelCount: 2, stride: 128),
            BusRef(data: buffer + 256, channelCount: 2, stride: 128), frames: 128)
        k = pointer.move()
    }
}
