// Tests. Helpers shared by the spatial kernel tests: a block renderer for mono-in / N-out kernels,
// orbiting motion, cross-correlation and energy measures. Independent of the kernels under test.
import AudioDSP
import DSPTestSupport
import Foundation

let spatialTestRate = 48_000.0

/// Renders mono `input` through a kernel into `channelCount` output channels, in blocks of `block`
/// frames (the bus stride). `update` runs before each block with the frame offset.
func renderSource(
    _ input: [Float], channelCount: Int, block: Int = 128, update: (Int) -> Void = { _ in },
    process: (UnsafePointer<Float>, BusRef, Int) -> Void
) -> [[Float]] {
    let frames = input.count
    let inBuffer = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let outBuffer = UnsafeMutablePointer<Float>.allocate(capacity: channelCount * block)
    defer {
        inBuffer.deallocate()
        outBuffer.deallocate()
    }
    var output = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channelCount)
    var done = 0
    while done < frames {
        let n = min(block, frames - done)
        update(done)
        for i in 0..<n { inBuffer[i] = input[done + i] }
        outBuffer.initialize(repeating: 0, count: channelCount * block)
        process(UnsafePointer(inBuffer), BusRef(data: outBuffer, channelCount: channelCount, stride: block), n)
        for c in 0..<channelCount {
            for i in 0..<n { output[c][done + i] = outBuffer[c * block + i] }
        }
        done += n
    }
    return output
}

/// Seeded uniform noise in [−amplitude, amplitude).
func spatialNoise(frames: Int, seed: UInt64, amplitude: Float = 0.5) -> [Float] {
    var rng = SeededRandom(seed: seed)
    return (0..<frames).map { _ in rng.nextFloat() * amplitude }
}

/// A source orbiting the listener in the horizontal plane at `revolutionsPerSecond`, starting ahead and
/// turning right, sampled at `frame`.
func orbitDirection(
    frame: Int, revolutionsPerSecond: Double = 1, sampleRate: Double = spatialTestRate,
    elevation: Double = 0
) -> SourceDirection {
    SourceDirection(
        azimuth: 2 * Double.pi * revolutionsPerSecond * Double(frame) / sampleRate, elevation: elevation, distance: 2)
}

/// Directions spread over the sphere (azimuth every 15°, elevations −60…60).
let sampledDirections: [SourceDirection] = stride(from: -60.0, through: 60, by: 30).flatMap { el in
    stride(from: -180.0, to: 180, by: 15).map {
        SourceDirection(azimuth: $0 * Double.pi / 180, elevation: el * Double.pi / 180)
    }
}

/// Sum of squares.
func energy(_ x: ArraySlice<Float>) -> Double { x.reduce(0.0) { $0 + Double($1) * Double($1) } }
