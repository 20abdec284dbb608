// Plain spatial-cost measurement: CPU ms per second of audio for ONE moving source through each
// spatial rendering kernel at 48 kHz, 128-frame blocks, the source orbiting once per second with 60
// position updates per second (so glides and HRIR crossfades are included). Only the render-side calls
// (setters and process) are timed, on the calling thread (CLOCK_THREAD_CPUTIME_ID); the median of
// `repeats` one-second runs is reported, minus the same loop with nothing rendered (the clock reads and
// the output clear). The control-side HRIR lookup is timed separately.
//
//   swift run --package-path Benchmarks -c release SpatialCost [--repeats 15]
import AudioDSP
import SpatialAssets

#if canImport(Glibc)
    import Glibc
#endif

var repeats = 15
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--repeats": repeats = max(1, Int(arguments.next() ?? "") ?? repeats)
    default:
        print("usage: SpatialCost [--repeats R]")
        exit(2)
    }
}

let rate = 48_000.0
let block = 128
let updateFrames = 800

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

let input = UnsafeMutablePointer<Float>.allocate(capacity: block)
let output = UnsafeMutablePointer<Float>.allocate(capacity: 8 * block)
let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 4 * block)
var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
for i in 0..<block {
    seed ^= seed << 13
    seed ^= seed >> 7
    seed ^= seed << 17
    input[i] = Float(Double(seed >> 11) / Double(1 << 53) - 0.5)
}

/// Median render CPU seconds per second of audio. `update` runs (untimed unless `timeUpdates`) every
/// 800 frames with the orbit's direction; `render` runs per block and is timed.
@MainActor
func measure(
    channels: Int, update: (SourceDirection) -> Void, timedUpdate: (SourceDirection) -> Void = { _ in },
    render: (BusRef) -> Void
) -> Double {
    let bus = BusRef(data: output, channelCount: channels, stride: block)
    var frame = 0
    func second() -> Double {
        var spent = 0.0
        for _ in 0..<(Int(rate) / block) {
            var start = threadCPUSeconds()
            if frame % updateFrames < block {
                let d = SourceDirection(azimuth: 2 * Double.pi * Double(frame) / rate, elevation: 0.1)
                spent += threadCPUSeconds() - start
                update(d)
                start = threadCPUSeconds()
                timedUpdate(d)
            }
            output.update(repeating: 0, count: channels * block)
            render(bus)
            spent += threadCPUSeconds() - start
            frame += block
        }
        return spent
    }
    _ = second()
    var samples = (0..<repeats).map { _ in second() }
    samples.sort()
    return samples[samples.count / 2]
}

let baseline = measure(channels: 8, update: { _ in }) { _ in }

func row(_ name: String, _ seconds: Double, _ note: String) {
    let ms = (max(0, seconds - baseline) * 1000 * 1000).rounded() / 1000
    print("| \(name) | \(ms) | \(note) |")
}

print("| algorithm (one moving source) | ms CPU per s of audio | notes |")
print("| --- | ---: | --- |")
print("| (timing loop alone, subtracted below) | \((baseline * 1e6).rounded() / 1000) | clock reads and output clear |")

var equalPower = EqualPowerPanningKernel()
row(
    "equal-power panning",
    measure(
        channels: 2, update: { _ in },
        timedUpdate: {
            equalPower.setDirection($0, gain: 0.8, rampFrames: updateFrames)
        }
    ) { equalPower.process(input: input, output: $0, frames: block) }, "stereo")

var head = SphericalHeadKernel(sampleRate: rate)
row(
    "spherical head",
    measure(
        channels: 2, update: { _ in },
        timedUpdate: {
            head.setDirection($0, gain: 0.8, rampFrames: updateFrames)
        }
    ) { head.process(input: input, output: $0, frames: block) }, "stereo")

do {
    // The filters the engine renders with (minimum phase, 64 or 128 taps), then the full-length set.
    let cases: [(String, HRTFQuality, SOFADataset.Options)] = [
        ("HRTF (KEMAR, 64 taps)", .standard, SOFADataset.Options(quality: .standard, sampleRate: rate)),
        ("HRTF HQ (KEMAR, 128 taps)", .high, SOFADataset.Options(quality: .high, sampleRate: rate)),
        ("HRTF, full-length filters (nearest)", .standard, SOFADataset.Options()),
        ("HRTF HQ, full-length filters", .high, SOFADataset.Options())
    ]
    for (name, quality, options) in cases {
        let loadStart = threadCPUSeconds()
        let set = try SOFADataset(path: SOFADataset.debianKEMARPath, sampleRate: rate, options: options)
        let loadMilliseconds = ((threadCPUSeconds() - loadStart) * 1000).rounded()
        var hrtf = set.makeConvolver(maxBlockFrames: block, quality: quality)
        let exchange = hrtf.exchange
        var lookups = 0.0
        var count = 0
        var publishedKey = -1
        let cost = measure(
            channels: 2,
            update: { d in
                // As the engine does: interpolating qualities (both, since 2026-11) publish a new pair when the
                // source enters another direction cell (HRTF) or on every update (HRTF HQ); a
                // nearest-measurement quality looks up from the previous measurement and publishes only when
                // it changes.
                let start = threadCPUSeconds()
                if quality.interpolates {
                    // HRTF on direction cells (a new pair only in a new cell), HRTF HQ every update.
                    let cell = quality.cellKey(for: d)
                    if cell < 0 || cell != publishedKey {
                        set.fill(exchange.writableSlot, direction: quality.cellCentre(cell) ?? d, interpolated: true)
                        exchange.publish()
                        publishedKey = cell
                    }
                } else {
                    let key = set.nearestKey(for: d, hint: publishedKey)
                    if key != publishedKey {
                        set.fill(exchange.writableSlot, nearestKey: key)
                        exchange.publish()
                        publishedKey = key
                    }
                }
                lookups += threadCPUSeconds() - start
                count += 1
            }
        ) { hrtf.process(input: input, output: $0, frames: block) }
        let micros = (lookups / Double(count) * 1e7).rounded() / 10
        row(
            name, cost,
            "\(set.filterLength) taps per ear; control-side lookup \(micros) µs per update; set load \(Int(loadMilliseconds)) ms"
        )
        hrtf.deallocate()
    }
} catch {
    print("| HRTF | – | \(error) |")
}

var encoder = AmbisonicEncoder()
row(
    "sound field: encode (per source)",
    measure(
        channels: 4, update: { _ in },
        timedUpdate: {
            encoder.setDirection($0, gain: 0.8, rampFrames: updateFrames)
        }
    ) { encoder.process(input: input, bformat: $0, frames: block) }, "onto the shared 4-channel B-format bus")
for (name, layout) in [("stereo", SpeakerLayout.stereo), ("5.1", .surround51), ("7.1", .surround71)] {
    let decoder = AmbisonicDecoder(layout: layout)
    let bformat = BusRef(data: scratch, channelCount: 4, stride: block)
    for i in 0..<(4 * block) { scratch[i] = input[i % block] }
    row(
        "sound field: decode to \(name)",
        measure(channels: layout.channelCount, update: { _ in }) {
            decoder.process(bformat: bformat, output: $0, frames: block)
        }, "once per environment, not per source")
    decoder.deallocate()
}

for (name, layout) in [("5.1", SpeakerLayout.surround51), ("7.1", .surround71), ("octagon", .octagon)] {
    var vbap = VBAPKernel(layout: layout)
    row(
        "VBAP \(name)",
        measure(
            channels: layout.channelCount, update: { _ in },
            timedUpdate: {
                vbap.setDirection($0, gain: 0.8, rampFrames: updateFrames)
            }
        ) { vbap.process(input: input, output: $0, frames: block) }, "\(layout.speakers.count) speakers")
    vbap.deallocate()
}

var pass = PassThroughKernel()
let stereoIn = BusRef(data: scratch, channelCount: 2, stride: block)
row(
    "stereo pass-through",
    measure(channels: 2, update: { _ in }) {
        pass.process(input: stereoIn, output: $0, frames: block)
    }, "stereo source")

var sends = SourceEnvironmentFilter(sampleRate: rate)
var phase = 0.0
row(
    "occlusion + obstruction + reverb send",
    measure(
        channels: 2, update: { _ in },
        timedUpdate: { _ in
            phase += 0.1
            sends.setParameters(
                reverbBlend: 0.3, obstructionDecibels: -10 - 5 * phase.truncatingRemainder(dividingBy: 1),
                occlusionDecibels: -6, rampFrames: updateFrames)
        }
    ) { sends.process(input: input, direct: $0.channel(0), reverbSend: $0.channel(1), frames: block) },
    "mono in, direct + send out")

var doppler = DopplerResampler(sampleRate: rate, headroomSeconds: 0.05)
var step = 0
row(
    "Doppler resampler",
    measure(
        channels: 1, update: { _ in },
        timedUpdate: { _ in
            step += 1
            doppler.setPitchRatio(1 + 0.03 * Double(step % 7 - 3) / 3, rampFrames: updateFrames)
        }
    ) { doppler.process(input: input, output: $0.channel(0), frames: block) }, "mono")
doppler.deallocate()
head.deallocate()
