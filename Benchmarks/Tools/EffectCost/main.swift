// Plain effect-cost measurement: CPU ms per second of audio for one stereo instance of each effect node
// at 48 kHz with 128-frame host blocks, measured as (player → effect → main) minus (player → main), the
// median of `repeats` one-second renders on the calling thread (CLOCK_THREAD_CPUTIME_ID). Then the
// time-effect kernels, driven directly through their pull interface (TimeEffectCost.swift).
//
//   swift run --package-path Benchmarks -c release EffectCost [--repeats 30] [--time-effects-only]
import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

var repeats = 30
var timeEffectsOnly = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--repeats": repeats = max(1, Int(arguments.next() ?? "") ?? repeats)
    case "--time-effects-only": timeEffectsOnly = true
    default:
        print("usage: EffectCost [--repeats R] [--time-effects-only]")
        exit(2)
    }
}

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A looping stereo noise player, optionally through one effect, into main.
func makeEngine(effect: (NodeKind, [String: ParameterValue])?) throws -> Engine {
    let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64, outputChannelCount: 2))
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    func noise() -> Float {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
        return Float(Double(seed >> 11) / Double(1 << 53) - 0.5)
    }
    let channels = (0..<2).map { _ in (0..<96_000).map { _ in noise() } }
    try engine.addBuffer(SampleBuffer(name: "n", channels: channels, sampleRate: 48_000))
    try engine.attach(
        .player, name: "p", parameters: ["buffer": .string("n"), "loop": .bool(true), "playing": .bool(true)])
    if let (kind, parameters) = effect {
        try engine.attach(kind, name: "fx", parameters: parameters)
        try engine.connect("p", to: "fx")
        try engine.connect("fx", to: "main")
    } else {
        try engine.connect("p", to: "main")
    }
    return engine
}

/// Median CPU seconds to render one second of audio in 128-frame blocks.
func measure(_ engine: Engine, repeats: Int) -> Double {
    let block = 128
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
    let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
    pointers[0] = buffer
    pointers[1] = buffer + block
    defer { buffer.deallocate(); pointers.deallocate() }
    func second() {
        for _ in 0..<375 {
            engine.renderEngine.render(
                frameCount: block, inputs: nil, inputCount: 0, outputs: UnsafePointer(pointers), outputCount: 2)
        }
    }
    second()  // warm-up (programs taken, caches filled)
    engine.poll()
    var samples: [Double] = []
    for _ in 0..<repeats {
        let start = threadCPUSeconds()
        second()
        samples.append(threadCPUSeconds() - start)
        engine.poll()
    }
    samples.sort()
    return samples[samples.count / 2]
}

let cases: [(String, NodeKind, [String: ParameterValue], Double)] = [
    ("reverb (largeHall)", .reverb, ["preset": .string("largeHall"), "wetDryMix": .float(50)], 20),
    (
        "eq, 4 bands active", .eq,
        [
            "band0.bypass": .bool(false), "band1.bypass": .bool(false), "band2.bypass": .bool(false),
            "band3.bypass": .bool(false), "band1.gain": .float(6), "band2.filterType": .string("highShelf")
        ], 3
    ),
    ("delay (0.3 s, 50 % feedback)", .delay, ["delayTime": .float(0.3), "feedback": .float(50)], 2),
    ("distortion (multiDistortedFunk)", .distortion, ["preset": .string("multiDistortedFunk")], 0)
]

do {
    if timeEffectsOnly {
        measureTimeEffects(repeats: repeats)
        exit(0)
    }
    let baseline = measure(try makeEngine(effect: nil), repeats: repeats)
    print("| effect (stereo) | ms CPU per s of audio | target |")
    print("| --- | ---: | --- |")
    for (name, kind, parameters, target) in cases {
        let cost = (measure(try makeEngine(effect: (kind, parameters)), repeats: repeats) - baseline) * 1000
        let verdict =
            target == 0 ? "—" : (cost <= target ? "≤ \(Int(target)) ms/s: met" : "≤ \(Int(target)) ms/s: missed")
        print("| \(name) | \((cost * 100).rounded() / 100) | \(verdict) |")
    }
    print()
    measureTimeEffects(repeats: repeats)
} catch {
    print("set-up failed: \(error)")
    exit(1)
}
