// Tests. A host loop for the pull-model time effects (as the engine will run them), and a frequency
// estimator that does not depend on the kernels.
import AudioDSP
import DSPTestSupport
import Foundation

/// The render-side surface both time effects share.
protocol PullKernelUnderTest {
    var channelCount: Int { get }
    var maxBlockFrames: Int { get }
    var latencyFrames: Int { get }
    var underrunFrames: Int { get }
    func inputFramesWanted(outputFrames: Int) -> Int
    mutating func push(_ bus: BusRef, frames: Int)
    mutating func pull(_ output: BusRef, frames: Int)
    mutating func setParameter(_ index: Int, value: Double)
    mutating func setBypass(_ bypassed: Bool)
    mutating func reset()
    func deallocate()
}

extension TimePitchKernel: PullKernelUnderTest {}
extension VarispeedKernel: PullKernelUnderTest {}

/// What a run of the host loop produced.
struct PullRun {
    /// Output, per channel.
    var output: [[Float]]
    /// Input frames pushed before each output block was pulled (cumulative), and that block's first frame.
    var consumedAtBlock: [(outputFrame: Int, consumed: Int)] = []
    var totalPushes = 0
    var mostPushesForOneBlock = 0
    /// True when some block needed more pushes than the run's limit (the loop did not terminate).
    var hitPushLimit = false

    /// Input frames consumed per output frame between output frames `from` and `to` (block starts).
    func consumptionRatio(from: Int, to: Int) -> Double {
        let a = consumedAtBlock.first { $0.outputFrame >= from }!
        let b = consumedAtBlock.first { $0.outputFrame >= to }!
        return Double(b.consumed - a.consumed) / Double(b.outputFrame - a.outputFrame)
    }
}

/// Runs the engine's loop on `kernel`: for each output block of `block` frames,
/// `while k = inputFramesWanted(block), k > 0 { push k frames of signal }`, then `pull(block)`.
/// `signal(channel, inputFrame)` gives the input; `onBlock(kernel, outputFrame)` runs before each block.
func pullRun<K: PullKernelUnderTest>(
    _ kernel: inout K, frames: Int, block: Int = 128, pushLimit: Int = 100_000, startInputAt: Int = 0,
    signal: (Int, Int) -> Float, onBlock: ((inout K, Int) -> Void)? = nil
) -> PullRun {
    let channels = kernel.channelCount
    let stride = kernel.maxBlockFrames
    let inBuffer = UnsafeMutablePointer<Float>.allocate(capacity: channels * stride)
    let outBuffer = UnsafeMutablePointer<Float>.allocate(capacity: channels * stride)
    defer {
        inBuffer.deallocate()
        outBuffer.deallocate()
    }
    let inBus = BusRef(data: inBuffer, channelCount: channels, stride: stride)
    let outBus = BusRef(data: outBuffer, channelCount: channels, stride: stride)
    var run = PullRun(output: [[Float]](repeating: [], count: channels))
    for c in 0..<channels { run.output[c].reserveCapacity(frames) }
    var produced = 0
    var consumed = startInputAt
    while produced < frames {
        let n = min(block, frames - produced, stride)
        onBlock?(&kernel, produced)
        var pushes = 0
        while true {
            let k = kernel.inputFramesWanted(outputFrames: n)
            if k <= 0 { break }
            precondition(k <= stride, "wanted more than maxBlockFrames")
            for c in 0..<channels {
                for i in 0..<k { inBuffer[c * stride + i] = signal(c, consumed + i) }
            }
            kernel.push(inBus, frames: k)
            consumed += k
            pushes += 1
            if pushes >= pushLimit {
                run.hitPushLimit = true
                break
            }
        }
        run.totalPushes += pushes
        run.mostPushesForOneBlock = max(run.mostPushesForOneBlock, pushes)
        run.consumedAtBlock.append((produced, consumed - startInputAt))
        kernel.pull(outBus, frames: n)
        for c in 0..<channels {
            run.output[c].append(contentsOf: UnsafeBufferPointer(start: outBuffer + c * stride, count: n))
        }
        produced += n
    }
    return run
}

/// A sine as a `pullRun` signal (the same on every channel).
func sineSignal(_ frequency: Double, amplitude: Float = 0.5) -> (Int, Int) -> Float {
    { _, i in amplitude * Float(sin(2 * Double.pi * frequency * Double(i) / effectTestRate)) }
}

enum Frequency {
    /// Frequency of a (nearly) pure tone from its rising zero crossings, linearly interpolated, over the
    /// whole slice: (crossings − 1) / (time between the first and the last).
    static func estimate(_ x: ArraySlice<Float>, sampleRate: Double = effectTestRate) -> Double {
        var first = -1.0
        var last = -1.0
        var count = 0
        var previous = x.first ?? 0
        for (offset, v) in x.dropFirst().enumerated() {
            if previous < 0 && v >= 0 {
                let t = Double(offset) + Double(-previous) / Double(v - previous)
                if first < 0 { first = t }
                last = t
                count += 1
            }
            previous = v
        }
        guard count > 1 else { return 0 }
        return Double(count - 1) / (last - first) * sampleRate
    }

    /// The strongest frequency in `x` (Hann window, FFT of `size` points, Gaussian interpolation of the
    /// peak bin): robust where a signal carries more than one component.
    static func peak(_ x: ArraySlice<Float>, size: Int = 65_536, sampleRate: Double = effectTestRate) -> Double {
        let n = min(size, x.count)
        let windowed = x.prefix(n).enumerated().map { i, v in
            v * Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1)))
        }
        let mags = FFT.magnitudes(windowed, size: size)
        var k = 1
        for i in 1..<(mags.count - 1) where mags[i] > mags[k] { k = i }
        let a = log(max(mags[k - 1], 1e-300)), b = log(mags[k]), c = log(max(mags[k + 1], 1e-300))
        let delta = 0.5 * (a - c) / (a - 2 * b + c)
        return (Double(k) + delta) * sampleRate / Double(size)
    }
}

/// True if any sample is subnormal.
func hasSubnormal(_ channels: [[Float]]) -> Bool { channels.contains { $0.contains { $0.isSubnormal } } }
