// Tests. Helpers for the SOFA tests: rendering through an HRTF convolver fed from a dataset, the raw
// file read independently with libmysofa, and cross-correlation.
import AudioDSP
import CMySofa
import DSPTestSupport
import Foundation
import SpatialAssets

let kemarPath = SOFADataset.debianKEMARPath

/// Renders mono `input` through `kernel` in blocks of `block` frames; `update` runs before each block.
func renderHRTF(_ kernel: inout HRTFConvolver, _ input: [Float], block: Int, update: (Int) -> Void = { _ in })
    -> [[Float]]
{
    let frames = input.count
    let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
    defer { out.deallocate() }
    var result = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
    var done = 0
    while done < frames {
        let n = min(block, frames - done)
        update(done)
        out.initialize(repeating: 0, count: 2 * block)
        input.withUnsafeBufferPointer { x in
            kernel.process(
                input: x.baseAddress! + done, output: BusRef(data: out, channelCount: 2, stride: block), frames: n)
        }
        for c in 0..<2 {
            for i in 0..<n { result[c][done + i] = out[c * block + i] }
        }
        done += n
    }
    return result
}

/// Fills and publishes the HRIR for `direction`.
func publish(_ set: SOFADataset, _ exchange: HRIRExchange, _ direction: SourceDirection, interpolated: Bool) {
    set.fill(exchange.writableSlot, direction: direction, interpolated: interpolated)
    exchange.publish()
}

func noise(frames: Int, seed: UInt64, amplitude: Float = 0.5) -> [Float] {
    var rng = SeededRandom(seed: seed)
    return (0..<frames).map { _ in rng.nextFloat() * amplitude }
}

/// The file's raw measurement at SOFA azimuth/elevation (degrees; azimuth counter-clockwise), read with
/// libmysofa directly, independent of `SOFADataset`.
func rawMeasurement(path: String, sofaAzimuth: Float, elevation: Float) -> (
    left: [Float], right: [Float], rate: Double
)? {
    var error: Int32 = 0
    guard let h = mysofa_load(path, &error) else { return nil }
    defer { mysofa_free(h) }
    let n = Int(h.pointee.N)
    for i in 0..<Int(h.pointee.M) {
        let p = h.pointee.SourcePosition.values + 3 * i
        if abs(p[0] - sofaAzimuth) < 1e-3 && abs(p[1] - elevation) < 1e-3 {
            let ir = h.pointee.DataIR.values + 2 * i * n
            return (
                Array(UnsafeBufferPointer(start: ir, count: n)), Array(UnsafeBufferPointer(start: ir + n, count: n)),
                Double(h.pointee.DataSamplingRate.values[0])
            )
        }
    }
    return nil
}

/// In-place iterative radix-2 complex FFT (forward) of `count` (a power of two) points.
func referenceFFT(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>, count n: Int) {
    var j = 0
    for i in 1..<n {
        var bit = n >> 1
        while j & bit != 0 {
            j ^= bit
            bit >>= 1
        }
        j |= bit
        if i < j {
            (re[i], re[j]) = (re[j], re[i])
            (im[i], im[j]) = (im[j], im[i])
        }
    }
    var length = 2
    while length <= n {
        let angle = -2 * Double.pi / Double(length)
        let (wr, wi) = (cos(angle), sin(angle))
        var start = 0
        while start < n {
            var (cr, ci) = (1.0, 0.0)
            for k in 0..<(length / 2) {
                let a = start + k
                let b = a + length / 2
                let tr = re[b] * cr - im[b] * ci
                let ti = re[b] * ci + im[b] * cr
                re[b] = re[a] - tr
                im[b] = im[a] - ti
                re[a] += tr
                im[a] += ti
                (cr, ci) = (cr * wr - ci * wi, cr * wi + ci * wr)
            }
            start += length
        }
        length <<= 1
    }
}
