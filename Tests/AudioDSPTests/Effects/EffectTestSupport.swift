// Tests. Helpers shared by the effect tests: a block-splitting renderer, an FFT, Schroeder decay
// analysis and small statistics. Everything here is Double precision and independent of the kernels.
import AudioDSP
import DSPTestSupport
import Foundation

/// 48 kHz, the STYLE C7 default.
let effectTestRate = 48_000.0

/// The render-side surface every effect kernel shares.
protocol EffectKernelUnderTest {
    var channelCount: Int { get }
    var maxBlockFrames: Int { get }
    mutating func process(input: BusRef, output: BusRef, frames: Int)
    mutating func reset()
    mutating func setBypass(_ bypassed: Bool)
    func deallocate()
}

extension EQKernel: EffectKernelUnderTest {}
extension DelayKernel: EffectKernelUnderTest {}
extension ReverbKernel: EffectKernelUnderTest {}
extension DistortionKernel: EffectKernelUnderTest {}

/// Renders planar `input` through `kernel`, in blocks whose sizes cycle through `blocks` (each clamped
/// to `maxBlockFrames`). `inPlace` uses one bus for input and output. `onBlock` runs before each block
/// with the frame offset, for mid-stream parameter changes.
func render<K: EffectKernelUnderTest>(
    _ kernel: inout K, _ input: [[Float]], blocks: [Int] = [128], inPlace: Bool = false,
    onBlock: ((inout K, Int) -> Void)? = nil
) -> [[Float]] {
    let channels = kernel.channelCount
    let stride = kernel.maxBlockFrames
    let frames = input[0].count
    let inBuffer = UnsafeMutablePointer<Float>.allocate(capacity: channels * stride)
    let outBuffer = inPlace ? inBuffer : UnsafeMutablePointer<Float>.allocate(capacity: channels * stride)
    defer {
        inBuffer.deallocate()
        if !inPlace { outBuffer.deallocate() }
    }
    var output = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
    var done = 0
    var blockIndex = 0
    while done < frames {
        let n = min(max(1, min(blocks[blockIndex % blocks.count], stride)), frames - done)
        blockIndex += 1
        onBlock?(&kernel, done)
        for c in 0..<channels {
            let source = input[min(c, input.count - 1)]
            for i in 0..<n { inBuffer[c * stride + i] = source[done + i] }
        }
        let inBus = BusRef(data: inBuffer, channelCount: channels, stride: stride)
        let outBus = BusRef(data: outBuffer, channelCount: channels, stride: stride)
        kernel.process(input: inBus, output: outBus, frames: n)
        for c in 0..<channels {
            output[c].withUnsafeMutableBufferPointer { out in
                for i in 0..<n { out[done + i] = outBuffer[c * stride + i] }
            }
        }
        done += n
    }
    return output
}

/// `render` for a kernel held as an existential (opens it, renders, stores the advanced state back).
func render(
    _ kernel: inout any EffectKernelUnderTest, _ input: [[Float]], blocks: [Int] = [128], inPlace: Bool = false
) -> [[Float]] {
    func open<K: EffectKernelUnderTest>(_ k: K) -> ([[Float]], any EffectKernelUnderTest) {
        var copy = k
        let out = render(&copy, input, blocks: blocks, inPlace: inPlace)
        return (out, copy)
    }
    let (out, advanced) = open(kernel)
    kernel = advanced
    return out
}

/// A unit impulse followed by silence.
func impulse(frames: Int, amplitude: Float = 1) -> [Float] {
    var x = [Float](repeating: 0, count: frames)
    x[0] = amplitude
    return x
}

/// Seeded uniform noise in [−amplitude, amplitude).
func noise(frames: Int, seed: UInt64, amplitude: Float = 1) -> [Float] {
    var rng = SeededRandom(seed: seed)
    return (0..<frames).map { _ in rng.nextFloat() * amplitude }
}

/// Random block sizes in 1…maximum, seeded.
func randomSplits(seed: UInt64, count: Int = 64, maximum: Int = 128) -> [Int] {
    var rng = SeededRandom(seed: seed)
    return (0..<count).map { _ in rng.nextInt(1..<(maximum + 1)) }
}

/// Largest |a[i] − b[i]| over all channels.
func maxDifference(_ a: [[Float]], _ b: [[Float]]) -> Float {
    var m: Float = 0
    for (x, y) in zip(a, b) {
        for (u, v) in zip(x, y) { m = max(m, abs(u - v)) }
    }
    return m
}

enum FFT {
    /// In-place iterative radix-2 FFT; `re.count` must be a power of two.
    static func transform(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                re.swapAt(i, j)
                im.swapAt(i, j)
            }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            let wr = cos(angle), wi = sin(angle)
            var start = 0
            while start < n {
                var cr = 1.0, ci = 0.0
                for k in 0..<(length / 2) {
                    let a = start + k, b = a + length / 2
                    let tr = re[b] * cr - im[b] * ci
                    let ti = re[b] * ci + im[b] * cr
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                    let next = cr * wr - ci * wi
                    ci = cr * wi + ci * wr
                    cr = next
                }
                start += length
            }
            length <<= 1
        }
    }

    /// Magnitudes |X[k]| for k in 0...n/2 of a real signal zero-padded to `size`.
    static func magnitudes(_ x: [Float], size: Int) -> [Double] {
        var re = [Double](repeating: 0, count: size)
        var im = [Double](repeating: 0, count: size)
        for i in 0..<min(size, x.count) { re[i] = Double(x[i]) }
        transform(&re, &im)
        return (0...(size / 2)).map { (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() }
    }
}

/// A Double-precision biquad band-pass written from the cookbook formulas in the test, so the reverb
/// measurement does not depend on the code under test.
struct ReferenceBandPass {
    var b0 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    var s1 = 0.0, s2 = 0.0

    init(center: Double, octaves: Double, sampleRate: Double) {
        let w0 = 2 * Double.pi * center / sampleRate
        let alpha = sin(w0) * sinh(log(2) / 2 * octaves * w0 / sin(w0))
        let a0 = 1 + alpha
        b0 = alpha / a0
        b2 = -alpha / a0
        a1 = -2 * cos(w0) / a0
        a2 = (1 - alpha) / a0
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + s1
        s1 = -a1 * y + s2
        s2 = b2 * x - a2 * y
        return y
    }
}

enum Decay {
    /// Band-limits `x` to an octave around `center` with three cascaded cookbook band-passes.
    static func octaveBand(_ x: [Float], center: Double, sampleRate: Double) -> [Double] {
        var filters = (0..<3).map { _ in ReferenceBandPass(center: center, octaves: 1, sampleRate: sampleRate) }
        return x.map { v in
            var y = Double(v)
            for k in 0..<3 { y = filters[k].process(y) }
            return y
        }
    }

    /// Schroeder backward integration (M. R. Schroeder, "New method of measuring reverberation time",
    /// JASA 37, 1965): the energy decay curve in dB, 0 dB at the start.
    static func energyDecayCurve(_ x: [Double]) -> [Double] {
        var curve = [Double](repeating: 0, count: x.count)
        var sum = 0.0
        for i in stride(from: x.count - 1, through: 0, by: -1) {
            sum += x[i] * x[i]
            curve[i] = sum
        }
        let total = max(curve[0], 1e-300)
        return curve.map { 10 * log10(max($0, 1e-300) / total) }
    }

    /// RT60 from the least-squares line through the decay curve between `upper` and `lower` dB
    /// (ISO 3382: −5 … −35 dB, "T30"), extrapolated to −60 dB.
    static func rt60(curve: [Double], sampleRate: Double, upper: Double = -5, lower: Double = -35) -> Double {
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, n = 0.0
        for (i, v) in curve.enumerated() where v <= upper && v >= lower {
            let t = Double(i) / sampleRate
            sx += t
            sy += v
            sxx += t * t
            sxy += t * v
            n += 1
        }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)  // dB per second
        return -60 / slope
    }

    /// Pearson correlation of two equally long signals.
    static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let n = Double(a.count)
        let ma = a.reduce(0.0) { $0 + Double($1) } / n
        let mb = b.reduce(0.0) { $0 + Double($1) } / n
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for (x, y) in zip(a, b) {
            let u = Double(x) - ma, v = Double(y) - mb
            sab += u * v
            saa += u * u
            sbb += v * v
        }
        return sab / (saa * sbb).squareRoot()
    }
}
