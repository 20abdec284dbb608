// OpenAL Soft's HRTF output and Soundstage's, measured in the same way against the MIT KEMAR set: a
// click from every measured direction at 48 kHz, interaural time difference (cross-correlation peak,
// broadband and below 1.5 kHz), interaural level difference (broadband and octave bands 500 Hz–16 kHz)
// and third-octave magnitude per ear, against the file's own responses resampled to 48 kHz. The same
// metrics as Soundstage's `HRTFFidelityTests`.
//
//   swift run --package-path Benchmarks -c release HRTFFidelityCompare
//
// Fairness: OpenAL Soft renders its own HRTF data set (1.19: a built-in 32-tap minimum-phase build of
// the same KEMAR measurements, diffuse-field equalised and normalised), so its absolute spectrum is not
// the file's. ITD and ILD compare the two ears with each other and are unaffected by an equalisation
// common to both ears; magnitude is reported raw and "equalised": with each band's mean error over
// all directions and both ears removed (a direction-independent equalisation, which is what diffuse-
// field equalisation and normalisation are).
import AudioDSP
import COpenAL
import Foundation
import SpatialAssets

let rate = 48_000.0
let fftSize = 4096
let binHz = rate / Double(fftSize)

func fft(_ re: inout [Double], _ im: inout [Double]) {
    let n = re.count
    var j = 0
    for i in 1..<n {
        var bit = n >> 1
        while j & bit != 0 { j ^= bit; bit >>= 1 }
        j |= bit
        if i < j { re.swapAt(i, j); im.swapAt(i, j) }
    }
    var length = 2
    while length <= n {
        let angle = -2 * Double.pi / Double(length)
        for start in stride(from: 0, to: n, by: length) {
            for k in 0..<(length / 2) {
                let (wr, wi) = (cos(angle * Double(k)), sin(angle * Double(k)))
                let a = start + k, b = a + length / 2
                let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                re[b] = re[a] - tr; im[b] = im[a] - ti
                re[a] += tr; im[a] += ti
            }
        }
        length <<= 1
    }
}

struct Spectrum { var re: [Double]; var im: [Double] }

func spectrum(_ x: [Float]) -> Spectrum {
    var re = [Double](repeating: 0, count: fftSize), im = re
    for (k, v) in x.enumerated() where k < fftSize { re[k] = Double(v) }
    fft(&re, &im)
    return Spectrum(re: re, im: im)
}

func bins(_ low: Double, _ high: Double) -> Range<Int> {
    let a = Int((low / binHz).rounded(.up))
    return a..<max(a + 1, Int((high / binHz).rounded(.up)))
}

let thirds: [Range<Int>] = {
    var r: [Range<Int>] = []
    var low = 200.0
    while low < 16_000 { let high = min(low * pow(2, 1.0 / 3), 16_000); r.append(bins(low, high)); low = high }
    return r
}()
let octaves = [500.0, 1000, 2000, 4000, 8000, 16_000].map {
    bins($0 / 2.0.squareRoot(), min($0 * 2.0.squareRoot(), rate / 2 - binHz))
}

func power(_ s: Spectrum, _ b: Range<Int>) -> Double {
    var p = 0.0
    for k in b { p += s.re[k] * s.re[k] + s.im[k] * s.im[k] }
    return max(p / Double(b.count), 1e-30)
}

func ild(_ l: Spectrum, _ r: Spectrum, _ b: Range<Int>? = nil) -> Double {
    let band = b ?? 0..<(fftSize / 2 + 1)
    return 10 * log10(power(l, band) / power(r, band))
}

/// Cross-correlation peak lag (frames, right later positive) within ±1.5 ms, refined by golden section.
func itd(_ l: Spectrum, _ r: Spectrum, lowpass: Bool) -> Double {
    let half = fftSize / 2
    var cr = [Double](repeating: 0, count: half + 1), ci = cr
    for k in 0...half {
        let w = lowpass ? 1 / (1 + pow(Double(k) * binHz / 1500, 8)) : 1
        cr[k] = w * (l.re[k] * r.re[k] + l.im[k] * r.im[k])
        ci[k] = w * (l.re[k] * r.im[k] - l.im[k] * r.re[k])
    }
    var re = [Double](repeating: 0, count: fftSize), im = re
    for k in 0...half { re[k] = cr[k]; im[k] = -ci[k] }
    for k in (half + 1)..<fftSize { re[k] = cr[fftSize - k]; im[k] = ci[fftSize - k] }
    fft(&re, &im)
    let range = Int(1.5e-3 * rate)
    var best = 0
    for lag in -range...range where re[(lag + fftSize) % fftSize] > re[(best + fftSize) % fftSize] { best = lag }
    func value(_ tau: Double) -> Double {
        var s = 0.0
        for k in 1..<half {
            let a = 2 * Double.pi * Double(k) * tau / Double(fftSize)
            s += cr[k] * cos(a) - ci[k] * sin(a)
        }
        return s
    }
    var (a, b) = (Double(best) - 1, Double(best) + 1)
    let g = (5.0.squareRoot() - 1) / 2
    var c = b - g * (b - a), d = a + g * (b - a)
    var fc = value(c), fd = value(d)
    while b - a > 1e-3 {
        if fc > fd {
            (b, d, fd) = (d, c, fc); c = b - g * (b - a); fc = value(c)
        } else {
            (a, c, fc) = (c, d, fd); d = a + g * (b - a); fd = value(d)
        }
    }
    return (a + b) / 2
}

// KEMAR's grid: elevations −40…90 in 10° steps, this many azimuths each (710 in all).
let grid: [(Double, Int)] = [
    (-40, 56), (-30, 60), (-20, 72), (-10, 72), (0, 72), (10, 72), (20, 72), (30, 60),
    (40, 56), (50, 45), (60, 36), (70, 24), (80, 12), (90, 1)
]
var directions: [(azimuth: Double, elevation: Double)] = []
for (elevation, count) in grid {
    for i in 0..<count { directions.append((360 * Double(i) / Double(count), elevation)) }
}

let reference = try SOFADataset(
    path: SOFADataset.debianKEMARPath, sampleRate: rate,
    options: .init(discardedEnergyFraction: 0))
@MainActor func referencePair(_ d: SourceDirection) -> (Spectrum, Spectrum) {
    let m = reference.measurement(reference.nearestMeasurement(to: d))
    func ir(_ taps: [Float], _ delay: Double) -> [Float] { [Float](repeating: 0, count: Int(delay.rounded())) + taps }
    return (spectrum(ir(m.left, m.leftDelay)), spectrum(ir(m.right, m.rightDelay)))
}

func soundstage(_ quality: HRTFQuality) throws -> (SourceDirection) -> [[Float]] {
    let set = try SOFADataset(
        path: SOFADataset.debianKEMARPath, sampleRate: rate, options: .init(quality: quality, sampleRate: rate))
    return { d in
        var k = set.makeConvolver(maxBlockFrames: 2048, quality: quality)
        defer { k.deallocate() }
        set.fill(k.exchange.writableSlot, direction: d, interpolated: quality.interpolates)
        k.exchange.publish()
        var x = [Float](repeating: 0, count: 2048)
        x[0] = 1
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { out.deallocate() }
        out.initialize(repeating: 0, count: 4096)
        x.withUnsafeBufferPointer {
            k.process(input: $0.baseAddress!, output: BusRef(data: out, channelCount: 2, stride: 2048), frames: 2048)
        }
        return [
            Array(UnsafeBufferPointer(start: out, count: 2048)),
            Array(UnsafeBufferPointer(start: out + 2048, count: 2048))
        ]
    }
}

/// Closes the loopback device when the measurement is done.
var openALCleanup: () -> Void = {}

@MainActor func openAL() throws -> (String, (SourceDirection) -> [[Float]]) {
    guard let device = alcLoopbackOpenDeviceSOFT(nil) else { throw NSError(domain: "no loopback device", code: 1) }
    let attributes: [ALCint] = [
        ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
        ALC_FREQUENCY, ALCint(rate), ALC_HRTF_SOFT, ALC_TRUE, 0
    ]
    guard let context = alcCreateContext(device, attributes) else { throw NSError(domain: "no context", code: 2) }
    alcMakeContextCurrent(context)
    var status: ALCint = -1
    alcGetIntegerv(device, ALC_HRTF_STATUS_SOFT, 1, &status)
    guard status == ALC_HRTF_ENABLED_SOFT else { throw NSError(domain: "HRTF not enabled (\(status))", code: 3) }
    let name = alcGetString(device, ALC_HRTF_SPECIFIER_SOFT).map { String(cString: $0) } ?? "-"
    alDistanceModel(AL_NONE)
    // The click sits 256 frames into the buffer, clear of anything the mixer does when a source starts.
    var click = [Float](repeating: 0, count: 2048)
    click[256] = 1
    var buffer: ALuint = 0
    alGenBuffers(1, &buffer)
    click.withUnsafeBytes {
        alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, $0.baseAddress, ALsizei($0.count), ALsizei(rate))
    }
    var source: ALuint = 0
    alGenSources(1, &source)
    alSourcei(source, AL_BUFFER, ALint(buffer))
    alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
    let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 2048)
    openALCleanup = {
        alDeleteSources(1, &source)
        alDeleteBuffers(1, &buffer)
        alcMakeContextCurrent(nil)
        alcDestroyContext(context)
        alcCloseDevice(device)
        out.deallocate()
    }
    return (
        name,
        { d in
            let v = d.local
            alSource3f(source, AL_POSITION, Float(v.x), Float(v.y), Float(v.z))
            alSourcePlay(source)
            alcRenderSamplesSOFT(device, out, 2048)
            alSourceStop(source)
            alSourceRewind(source)
            var l = [Float](repeating: 0, count: 2048), r = l
            for i in 0..<2048 { l[i] = out[2 * i]; r[i] = out[2 * i + 1] }
            return [l, r]
        }
    )
}

struct Row {
    var itd = 0.0, itdLow = 0.0, over = 0, wrong = 0, ild = 0.0, ildBand = 0.0, magnitude = 0.0, equalised = 0.0
}

@MainActor func measure(_ render: (SourceDirection) -> [[Float]]) -> Row {
    var row = Row()
    var errors: [[Double]] = []
    for (az, el) in directions {
        let d = SourceDirection(azimuth: -az * Double.pi / 180, elevation: el * Double.pi / 180)
        let (rl, rr) = referencePair(d)
        let out = render(d)
        let (yl, yr) = (spectrum(out[0]), spectrum(out[1]))
        var worst = 0.0
        for lowpass in [false, true] {
            let e = itd(rl, rr, lowpass: lowpass), y = itd(yl, yr, lowpass: lowpass)
            worst = max(worst, abs(y - e))
            if abs(e) > 0.5 && (y < 0) != (e < 0) { row.wrong += 1 }
            if lowpass { row.itdLow = max(row.itdLow, abs(y - e)) } else { row.itd = max(row.itd, abs(y - e)) }
        }
        if worst > 0.5 { row.over += 1 }
        row.ild = max(row.ild, abs(ild(yl, yr) - ild(rl, rr)))
        for b in octaves { row.ildBand = max(row.ildBand, abs(ild(yl, yr, b) - ild(rl, rr, b))) }
        for (y, r) in [(yl, rl), (yr, rr)] { errors.append(thirds.map { 10 * log10(power(y, $0) / power(r, $0)) }) }
    }
    let mean = thirds.indices.map { b in errors.map { $0[b] }.reduce(0, +) / Double(errors.count) }
    for e in errors {
        let raw = (e.map { $0 * $0 }.reduce(0, +) / Double(e.count)).squareRoot()
        let eq = (zip(e, mean).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(e.count)).squareRoot()
        row.magnitude = max(row.magnitude, raw)
        row.equalised = max(row.equalised, eq)
    }
    return row
}

var rows: [(String, Row)] = []
rows.append(("Soundstage HRTF (64 taps)", measure(try soundstage(.standard))))
rows.append(("Soundstage HRTF HQ (128 taps)", measure(try soundstage(.high))))
let (name, openALRender) = try openAL()
rows.append(("OpenAL Soft \(String(cString: alGetString(AL_VERSION))) (\(name))", measure(openALRender)))
openALCleanup()
print(
    "| 48 kHz, \(directions.count) KEMAR directions | ITD broadband / < 1.5 kHz, largest error (frames) | off > 0.5 frame | wrong side | ILD broadband / octave, largest error (dB) | third-octave RMS per ear, raw / equalised (dB) |"
)
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for (n, r) in rows {
    print(
        String(
            format: "| %@ | %.2f / %.2f | %d | %d | %.2f / %.2f | %.2f / %.2f |", n, r.itd, r.itdLow, r.over, r.wrong,
            r.ild,
            r.ildBand, r.magnitude, r.equalised))
}
