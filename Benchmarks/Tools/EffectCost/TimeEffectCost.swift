// The time-effect kernels measured directly (they are not graph nodes yet): CPU per second of output
// audio for one stereo instance driven by the engine's pull loop, 128-frame output blocks at 48 kHz.
// The input is read in place from a preallocated noise slab, so upstream rendering costs nothing.
import AudioDSP

#if canImport(Glibc)
    import Glibc
#endif

/// The pull interface both kernels share.
protocol PullKernel {
    func inputFramesWanted(outputFrames: Int) -> Int
    mutating func push(_ bus: BusRef, frames: Int)
    mutating func pull(_ output: BusRef, frames: Int)
}

extension TimePitchKernel: PullKernel {}
extension VarispeedKernel: PullKernel {}

/// Looping stereo noise, planar, read through `BusRef`s that point into it.
struct NoiseSlab {
    static let frames = 1 << 20
    let data: UnsafeMutablePointer<Float>
    var position = 0

    init() {
        data = .allocate(capacity: 2 * Self.frames + 8192)
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        for i in 0..<(2 * Self.frames + 8192) {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            data[i] = Float(Double(seed >> 11) / Double(1 << 53) - 0.5)
        }
    }

    /// The next `frames` (≤ 4096) frames as a bus, wrapping before the end.
    mutating func next(_ frames: Int) -> BusRef {
        if position + frames > Self.frames { position = 0 }
        defer { position += frames }
        return BusRef(data: data + position, channelCount: 2, stride: Self.frames + 4096)
    }
}

/// Median CPU seconds (over `repeats`) to deliver one second of output (375 blocks of 128 frames).
func measurePull<K: PullKernel>(_ kernel: inout K, repeats: Int, slab: inout NoiseSlab) -> Double {
    let block = 128
    let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
    defer { out.deallocate() }
    let outBus = BusRef(data: out, channelCount: 2, stride: block)
    func second() {
        for _ in 0..<375 {
            while case let k = kernel.inputFramesWanted(outputFrames: block), k > 0 {
                kernel.push(slab.next(k), frames: k)
            }
            kernel.pull(outBus, frames: block)
        }
    }
    second()  // warm-up: priming, caches
    var samples: [Double] = []
    for _ in 0..<repeats {
        let start = threadCPUSeconds()
        second()
        samples.append(threadCPUSeconds() - start)
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// Prints the time-pitch and varispeed tables (markdown).
func measureTimeEffects(repeats: Int) {
    var slab = NoiseSlab()
    print("| time-pitch (stereo) | ms CPU per s of output | target ≤ 100 ms/s |")
    print("| --- | ---: | --- |")
    let timePitchCases: [(rate: Double, cents: Double)] = [
        (1, 0), (1, 700), (1, -1200), (1.5, 0), (2, 0), (0.5, 0), (1.25, -300), (4, 0), (8, 0), (32, 0), (1.0 / 32, 0)
    ]
    for (rate, cents) in timePitchCases {
        var k = TimePitchKernel(sampleRate: 48_000, maxBlockFrames: 128, channelCount: 2)
        k.setRate(rate)
        k.setPitch(cents: cents)
        let cost = measurePull(&k, repeats: repeats, slab: &slab) * 1000
        k.deallocate()
        let verdict = cost <= 100 ? "met" : "missed"
        let name = "rate \(rate == 1.0 / 32 ? "1/32" : "\(rate)"), pitch \(Int(cents)) cents"
        print("| \(name) | \(rounded(cost)) | \(verdict) |")
    }
    var inits: [Double] = []
    for _ in 0..<5 {
        let start = threadCPUSeconds()
        let k = TimePitchKernel(sampleRate: 48_000, maxBlockFrames: 128, channelCount: 2)
        inits.append(threadCPUSeconds() - start)
        k.deallocate()
    }
    print()
    print("TimePitchKernel.init (stereo, incl. warm-up): \(rounded(inits.sorted()[2] * 1000)) ms CPU (median of 5)")
    print()
    print("| varispeed (stereo) | ms CPU per s of output |")
    print("| --- | ---: |")
    for rate in [0.25, 0.5, 1, 1.001, 1.5, 2, 4] {
        var k = VarispeedKernel(sampleRate: 48_000, maxBlockFrames: 128, channelCount: 2)
        k.setRate(rate)
        let cost = measurePull(&k, repeats: repeats, slab: &slab) * 1000
        k.deallocate()
        print("| rate \(rate) | \(rounded(cost)) |")
    }
}

func rounded(_ x: Double) -> Double { (x * 100).rounded() / 100 }
