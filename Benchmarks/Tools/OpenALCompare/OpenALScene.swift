// OpenAL Soft side of the comparison: a loopback device (ALC_SOFT_loopback) rendering float stereo at
// 48 kHz, with HRTF requested on or off (ALC_SOFT_HRTF), N looping mono sources moved every block with
// deferred updates (AL_SOFT_deferred_updates), rendered with alcRenderSamplesSOFT.
import COpenAL

/// An OpenAL Soft context on a loopback device with `sourceCount` playing sources.
final class OpenALScene: Scene {
    let name: String
    let sourceCount: Int
    /// What the device reports for ALC_HRTF_STATUS_SOFT, and the HRTF it loaded.
    let hrtfStatus: String
    let hrtfName: String
    private let device: OpaquePointer
    private let context: OpaquePointer
    private var buffer: ALuint = 0
    private var sources: [ALuint]
    private let output: UnsafeMutablePointer<Float>
    private let blockFrames: Int

    init(hrtf: Bool, sourceCount: Int, signal: [Float], sampleRate: Int, blockFrames: Int) throws {
        name = hrtf ? "OpenAL Soft, HRTF" : "OpenAL Soft, no HRTF"
        self.sourceCount = sourceCount
        self.blockFrames = blockFrames
        guard alcIsExtensionPresent(nil, "ALC_SOFT_loopback") != 0,
            let device = alcLoopbackOpenDeviceSOFT(nil)
        else {
            throw BenchError("OpenAL Soft: no loopback device (ALC_SOFT_loopback)")
        }
        self.device = device
        guard alcIsRenderFormatSupportedSOFT(device, ALCsizei(sampleRate), ALC_STEREO_SOFT, ALC_FLOAT_SOFT) != 0 else {
            alcCloseDevice(device)
            throw BenchError("OpenAL Soft: float stereo at \(sampleRate) Hz is not a loopback format")
        }
        let attributes: [ALCint] = [
            ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
            ALC_FREQUENCY, ALCint(sampleRate), ALC_HRTF_SOFT, hrtf ? ALC_TRUE : ALC_FALSE,
            // The default allows 255 mono sources; ask for room for every source.
            ALC_MONO_SOURCES, ALCint(max(256, sourceCount)), ALC_STEREO_SOURCES, 0, 0
        ]
        guard let context = alcCreateContext(device, attributes) else {
            alcCloseDevice(device)
            throw BenchError("OpenAL Soft: alcCreateContext failed (\(alcGetError(device)))")
        }
        self.context = context
        alcMakeContextCurrent(context)
        var status: ALCint = -1
        alcGetIntegerv(device, ALC_HRTF_STATUS_SOFT, 1, &status)
        hrtfStatus = Self.describeHRTFStatus(status)
        hrtfName = alcGetString(device, ALC_HRTF_SPECIFIER_SOFT).map { String(cString: $0) } ?? "-"
        if hrtf && status != ALC_HRTF_ENABLED_SOFT {
            throw BenchError("OpenAL Soft: HRTF requested but the device reports \(hrtfStatus)")
        }

        var buffer: ALuint = 0
        alGenBuffers(1, &buffer)
        signal.withUnsafeBytes { bytes in
            alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, bytes.baseAddress, ALsizei(bytes.count), ALsizei(sampleRate))
        }
        self.buffer = buffer
        sources = [ALuint](repeating: 0, count: sourceCount)
        alGenSources(ALsizei(sourceCount), &sources)
        if alGetError() != AL_NO_ERROR { throw BenchError("OpenAL Soft: cannot create \(sourceCount) sources") }
        let sources = self.sources
        for (i, source) in sources.enumerated() {
            alSourcei(source, AL_BUFFER, ALint(buffer))
            alSourcei(source, AL_LOOPING, AL_TRUE)
            alSourcei(source, AL_SAMPLE_OFFSET, ALint(Stagger.startFrame(i, frames: signal.count)))
            alSource3f(source, AL_POSITION, 0, 0, -2)
        }
        alSourcePlayv(ALsizei(sourceCount), sources)
        if alGetError() != AL_NO_ERROR { throw BenchError("OpenAL Soft: setting up the sources failed") }
        output = .allocate(capacity: 2 * blockFrames)
        output.initialize(repeating: 0, count: 2 * blockFrames)
    }

    deinit {
        alSourceStopv(ALsizei(sourceCount), sources)
        alDeleteSources(ALsizei(sourceCount), sources)
        alDeleteBuffers(1, &buffer)
        alcMakeContextCurrent(nil)
        alcDestroyContext(context)
        alcCloseDevice(device)
        output.deallocate()
    }

    /// All positions in one deferred batch (OpenAL Soft applies them together at the next render).
    func update(positions: UnsafePointer<Float>) {
        alDeferUpdatesSOFT()
        for i in 0..<sourceCount {
            alSource3f(sources[i], AL_POSITION, positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])
        }
        alProcessUpdatesSOFT()
    }

    func render() {
        alcRenderSamplesSOFT(device, output, ALCsizei(blockFrames))
    }

    /// Mean square of the last block, both channels (interleaved).
    func lastBlockPower() -> Double {
        var sum = 0.0
        for i in 0..<(2 * blockFrames) { sum += Double(output[i]) * Double(output[i]) }
        return sum / Double(2 * blockFrames)
    }

    func poll() {}

    func activate() { alcMakeContextCurrent(context) }

    static func describeHRTFStatus(_ status: ALCint) -> String {
        switch status {
        case ALC_HRTF_DISABLED_SOFT: return "disabled"
        case ALC_HRTF_ENABLED_SOFT: return "enabled"
        case ALC_HRTF_DENIED_SOFT: return "denied"
        case ALC_HRTF_REQUIRED_SOFT: return "required"
        case ALC_HRTF_HEADPHONES_DETECTED_SOFT: return "headphones detected"
        case ALC_HRTF_UNSUPPORTED_FORMAT_SOFT: return "unsupported format"
        default: return "unknown (\(status))"
        }
    }
}
