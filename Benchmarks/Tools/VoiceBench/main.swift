// Voice processing on a recorded scene: the voice processor in quality and low-complexity mode, and as
// anchors called directly SpeexDSP's MDF (200 ms filter) plus its preprocessor and webrtc-audio-processing
// 0.3 (AEC, AEC with extended filter and delay-agnostic mode, AECM), each fed 10 ms frames of the scene's
// raw float files. Writes one float WAV per variant and prints, per variant, the
// CPU time per second of audio on the calling thread (CLOCK_THREAD_CPUTIME_ID) as a JSON line.
//
//   swift run --package-path Benchmarks -c release VoiceBench SCENE_DIR OUT_DIR [--agc] [--no-ns]
//       [--stereo-reference] [--quality-only | --low-only]
//
// --stereo-reference gives the voice processor the far end on two reference channels: far.f32 on both
// (one source on two loudspeakers), or far.f32 on the left and far_r.f32 on the right when the scene has
// that file (Benchmarks/voice-stereo-scene.py); the anchors keep far.f32 alone. --quality-only runs the
// quality mode alone, --low-only the low-complexity mode alone (for a profile of either).
// SCENE_DIR holds mic.f32 and far.f32 (float32, mono) and scene.json ("fs") as written by the
// echo-cancellation yardstick's gen_signals.py; Benchmarks/run-voice.sh generates and scores scenes.
import AudioDSP
import CSpeexDSP
import CWebRTCAnchor

#if canImport(Glibc)
    import Glibc
#endif

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func readFile(_ path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else {
        print("cannot open \(path)")
        exit(1)
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    return bytes
}

func readFloats(_ path: String) -> [Float] {
    let bytes = readFile(path)
    return bytes.withUnsafeBytes { raw in Array(raw.bindMemory(to: Float.self)) }
}

/// The "fs" field of scene.json.
func sceneRate(_ directory: String) -> Double {
    let text = String(decoding: readFile(directory + "/scene.json"), as: UTF8.self)
    guard let range = text.firstRange(of: "\"fs\":") else { return 16_000 }
    let digits = text[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber }
    return Double(digits) ?? 16_000
}

/// A mono 32-bit float WAV (format 3).
func writeWAV(_ path: String, _ samples: [Float], sampleRate: Int) {
    var header: [UInt8] = []
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { header.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { header.append(contentsOf: $0) } }
    let dataBytes = UInt32(samples.count * 4)
    header.append(contentsOf: Array("RIFF".utf8))
    u32(36 + dataBytes)
    header.append(contentsOf: Array("WAVEfmt ".utf8))
    u32(16)
    u16(3)
    u16(1)
    u32(UInt32(sampleRate))
    u32(UInt32(sampleRate * 4))
    u16(4)
    u16(32)
    header.append(contentsOf: Array("data".utf8))
    u32(dataBytes)
    guard let file = fopen(path, "wb") else {
        print("cannot write \(path)")
        exit(1)
    }
    _ = header.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
    _ = samples.withUnsafeBufferPointer { fwrite($0.baseAddress, 4, $0.count, file) }
    fclose(file)
}

var positional: [String] = []
var agc = false
var noiseSuppression = true
var referenceChannels = 1
var qualityOnly = false
var lowOnly = false
for argument in CommandLine.arguments.dropFirst() {
    switch argument {
    case "--agc": agc = true
    case "--no-ns": noiseSuppression = false
    case "--stereo-reference": referenceChannels = 2
    case "--quality-only": qualityOnly = true
    case "--low-only": lowOnly = true
    default: positional.append(argument)
    }
}
guard positional.count == 2 else {
    print("usage: VoiceBench SCENE_DIR OUT_DIR [--agc] [--no-ns] [--stereo-reference] [--quality-only | --low-only]")
    exit(2)
}
let scene = positional[0]
let outDirectory = positional[1]
let fs = sceneRate(scene)
let mic = readFloats(scene + "/mic.f32")
let far = readFloats(scene + "/far.f32")
/// The right loudspeaker's signal of a two-signal scene.
let farRight: [Float]? = access(scene + "/far_r.f32", F_OK) == 0 ? readFloats(scene + "/far_r.f32") : nil
let count = min(mic.count, far.count, farRight?.count ?? far.count)
let seconds = Double(count) / fs

/// Runs `prepare`, the timed `process` and `finish` for each whole frame of `f` samples of the scene
/// (each given the frame's first sample index); returns the CPU seconds `process` took.
func timedFrames(_ f: Int, prepare: (Int) -> Void, process: () -> Void, finish: (Int) -> Void) -> Double {
    var cpu = 0.0
    var start = 0
    while start + f <= count {
        prepare(start)
        let t0 = threadCPUSeconds()
        process()
        cpu += threadCPUSeconds() - t0
        finish(start)
        start += f
    }
    return cpu
}

/// CPU time per second of audio, in percent, to two decimals.
func cpuPercent(_ cpu: Double) -> Double { Double(Int(cpu / seconds * 10_000)) / 100 }

@MainActor func runKernel(_ mode: VoiceProcessingMode, name: String) {
    let settings = VoiceProcessorSettings(
        mode: mode, agc: agc, noiseSuppression: noiseSuppression, micChannels: 1,
        referenceChannels: referenceChannels, sampleRate: fs)
    let kernel = VoiceProcessorKernel(settings: settings)
    let f = kernel.frameLength
    var output = [Float](repeating: 0, count: count)
    let micFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    let farFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    let outFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    defer {
        micFrame.deallocate()
        farFrame.deallocate()
        outFrame.deallocate()
    }
    var micPointers = [micFrame]
    // A stereo reference carries the far end on both channels (one source on two loudspeakers), or the
    // scene's right loudspeaker on the second.
    let rightFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    defer { rightFrame.deallocate() }
    var farPointers = [UnsafeMutablePointer<Float>](repeating: farFrame, count: referenceChannels)
    if referenceChannels == 2 && farRight != nil { farPointers[1] = rightFrame }
    var outPointers = [outFrame]
    var delays: [Float] = []
    let cpu = timedFrames(
        f,
        prepare: { start in
            for n in 0..<f {
                micFrame[n] = mic[start + n]
                farFrame[n] = far[start + n]
                if let farRight { rightFrame[n] = farRight[start + n] }
            }
        },
        process: { kernel.process(mic: &micPointers, reference: &farPointers, output: &outPointers) },
        finish: { start in
            for n in 0..<f { output[start + n] = outFrame[n] }
            if (start / f) % 100 == 99 { delays.append(kernel.analysis.delayMs) }
        })
    writeWAV(outDirectory + "/\(name).wav", output, sampleRate: Int(fs))
    let delayText = delays.map { String(Int(($0 * 10).rounded()) / 10) }.joined(separator: ",")
    print(
        "{\"variant\": \"\(name)\", \"cpu_percent\": \(cpuPercent(cpu)), "
            + "\"latency_ms\": \(Double(kernel.latencyFrames) * 1000 / fs), \"delay_ms_per_s\": [\(delayText)]}")
}

@MainActor func runAnchor() {
    let f = Int(fs / 100)
    guard let echo = speex_echo_state_init(Int32(f), Int32(0.2 * fs)),
        let preprocess = speex_preprocess_state_init(Int32(f), Int32(fs))
    else { exit(1) }
    var rate = Int32(fs)
    speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
    speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo))
    var on: Int32 = noiseSuppression ? 1 : 0
    speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_DENOISE, &on)
    var agcOn: Int32 = agc ? 1 : 0
    speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_AGC, &agcOn)
    var micFrame = [Int16](repeating: 0, count: f)
    var farFrame = [Int16](repeating: 0, count: f)
    var outFrame = [Int16](repeating: 0, count: f)
    var output = [Float](repeating: 0, count: count)
    func q(_ x: Float) -> Int16 { Int16(min(max((x * 32768).rounded(), -32768), 32767)) }
    let cpu = timedFrames(
        f,
        prepare: { start in
            for n in 0..<f {
                micFrame[n] = q(mic[start + n])
                farFrame[n] = q(far[start + n])
            }
        },
        process: {
            speex_echo_cancellation(echo, &micFrame, &farFrame, &outFrame)
            speex_preprocess_run(preprocess, &outFrame)
        },
        finish: { start in for n in 0..<f { output[start + n] = Float(outFrame[n]) / 32768 } })
    speex_preprocess_state_destroy(preprocess)
    speex_echo_state_destroy(echo)
    writeWAV(outDirectory + "/speex.wav", output, sampleRate: Int(fs))
    print("{\"variant\": \"speex\", \"cpu_percent\": \(cpuPercent(cpu))}")
}

/// webrtc-audio-processing 0.3 through the CWebRTCAnchor shim: high-pass filter, noise suppression (unless
/// --no-ns), the stream delay given as 0 on every frame (the delay is not given to the canceller).
@MainActor func runWebRTC(_ kind: webrtc_anchor_kind, name: String) {
    let f = Int(fs / 100)
    var error: Int32 = 0
    guard let anchor = webrtc_anchor_create(Int32(fs), kind, noiseSuppression ? 1 : 0, &error) else {
        print("{\"variant\": \"\(name)\", \"error\": \(error)}")
        return
    }
    var micFrame = [Float](repeating: 0, count: f)
    var farFrame = [Float](repeating: 0, count: f)
    var outFrame = [Float](repeating: 0, count: f)
    var output = [Float](repeating: 0, count: count)
    var status: Int32 = 0
    let cpu = timedFrames(
        f,
        prepare: { start in
            for n in 0..<f {
                micFrame[n] = mic[start + n]
                farFrame[n] = far[start + n]
            }
        },
        process: { status = webrtc_anchor_process(anchor, farFrame, micFrame, &outFrame) },
        finish: { start in
            if status != 0 {
                print("{\"variant\": \"\(name)\", \"error\": \(status)}")
                exit(1)
            }
            for n in 0..<f { output[start + n] = outFrame[n] }
        })
    webrtc_anchor_destroy(anchor)
    writeWAV(outDirectory + "/\(name).wav", output, sampleRate: Int(fs))
    print("{\"variant\": \"\(name)\", \"cpu_percent\": \(cpuPercent(cpu))}")
}

if !lowOnly { runKernel(.quality, name: "quality") }
if qualityOnly { exit(0) }
runKernel(.lowComplexity, name: "low")
if lowOnly { exit(0) }
runAnchor()
runWebRTC(WEBRTC_ANCHOR_AEC, name: "webrtc")
runWebRTC(WEBRTC_ANCHOR_AEC_EXTENDED, name: "webrtc-ext")
runWebRTC(WEBRTC_ANCHOR_AECM, name: "aecm")
