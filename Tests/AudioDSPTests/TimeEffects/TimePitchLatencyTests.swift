// Tests. The time-pitch kernel with insert timing (a JACK insert: the same frames pushed and pulled each
// cycle) delays its output by exactly `latencyFrames`, the number the engine reports as port latency.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

/// The lag (in `range`) at which `y[i]` best matches `x[i − lag]`, over the middle of the signals.
func bestLag(_ y: [Float], _ x: [Float], range: ClosedRange<Int>) -> Int {
    var best = (lag: range.lowerBound, value: -Double.infinity)
    let from = max(8000, range.upperBound), to = min(y.count, x.count + range.lowerBound) - 1000
    for lag in range {
        var s = 0.0
        for i in from..<to { s += Double(y[i]) * Double(x[i - lag]) }
        if s > best.value { best = (lag, s) }
    }
    return best.lag
}

@Suite struct TimePitchLatencyTests {
    /// Pushes and pulls `block` frames per cycle, as the engine runs an insert.
    static func insertRun(_ k: inout TimePitchKernel, _ x: [Float], block: Int) -> [[Float]] {
        let channels = k.channelCount
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: channels * k.maxBlockFrames)
        defer { buffer.deallocate() }
        let bus = BusRef(data: buffer, channelCount: channels, stride: k.maxBlockFrames)
        var output = [[Float]](repeating: [], count: channels)
        var t = 0
        while t + block <= x.count {
            for c in 0..<channels {
                for i in 0..<block { buffer[c * k.maxBlockFrames + i] = x[t + i] * Float(c + 1) }
            }
            k.push(bus, frames: block)
            k.pull(bus, frames: block)
            for c in 0..<channels {
                output[c] += UnsafeBufferPointer(start: buffer + c * k.maxBlockFrames, count: block).map {
                    $0 / Float(c + 1)
                }
            }
            t += block
        }
        return output
    }

    /// A click and broadband noise through an insert at rate 1 / pitch 0: the output is the input delayed
    /// by exactly `latencyFrames` (noise cross-correlation peak over 0…4000 frames, and the click's
    /// largest output sample), with no underrun, for every block size and channel count. Before: 2431 to
    /// 2679 frames depending on the block size, against a reported 2560.
    @Test(arguments: [(1, 16), (1, 128), (2, 64), (2, 1000), (3, 256), (2, 1024)] as [(Int, Int)])
    func insertDelaysByExactlyItsLatency(channels: Int, block: Int) {
        var k = TimePitchKernel(sampleRate: effectTestRate, maxBlockFrames: 1024, channelCount: channels)
        defer { k.deallocate() }
        k.setInsertTiming(true)
        let x = noise(frames: 30_000, seed: 9, amplitude: 0.5)
        let y = Self.insertRun(&k, x, block: block)
        for c in 0..<channels {
            let lag = bestLag(y[c], x, range: 0...4000)
            #expect(lag == k.latencyFrames, "channel \(c), \(block)-frame blocks: \(lag) frames")
        }
        #expect(k.underrunFrames == 0)

        var clicked = TimePitchKernel(sampleRate: effectTestRate, maxBlockFrames: 1024, channelCount: channels)
        defer { clicked.deallocate() }
        clicked.setInsertTiming(true)
        var click = [Float](repeating: 0, count: 12_000)
        click[1000] = 1
        let z = Self.insertRun(&clicked, click, block: block)
        for c in 0..<channels {
            let peak = z[c].indices.max { abs(z[c][$0]) < abs(z[c][$1]) }!
            #expect(peak == 1000 + clicked.latencyFrames, "channel \(c): click out at \(peak)")
        }
    }

    /// Insert timing survives a reset and a bypass round trip: afterwards the delay is still exactly
    /// `latencyFrames`, and a settled bypass plays the input delayed by the same amount, bit for bit.
    @Test func resetAndBypassKeepTheInsertDelay() {
        var k = TimePitchKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 1)
        defer { k.deallocate() }
        k.setInsertTiming(true)
        let x = noise(frames: 24_000, seed: 4, amplitude: 0.5)
        _ = Self.insertRun(&k, Array(x[..<4096]), block: 128)
        k.reset()
        let y = Self.insertRun(&k, x, block: 128)
        #expect(bestLag(y[0], x, range: 0...4000) == k.latencyFrames)
        k.setBypass(true)
        let bypassed = Self.insertRun(&k, x, block: 128)[0]
        let l = k.latencyFrames
        let mismatches = (4000..<bypassed.count).filter { bypassed[$0] != x[$0 - l] }.count
        #expect(mismatches == 0, "bypassed output lags by \(bestLag(bypassed, x, range: 0...4000)), not \(l)")
        #expect(k.underrunFrames == 0)
    }

    /// Switching insert timing off restores stream alignment (lag 0).
    @Test func insertTimingOffRestoresAlignment() {
        var k = TimePitchKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 1)
        defer { k.deallocate() }
        k.setInsertTiming(true)
        #expect(k.hasInsertTiming)
        k.setInsertTiming(false)
        let x = noise(frames: 48_000, seed: 6, amplitude: 0.5)
        let run = pullRun(&k, frames: 40_000) { _, i in i < x.count ? x[i] : 0 }
        #expect(bestLag(run.output[0], x, range: -300...300) == 0)
    }
}
