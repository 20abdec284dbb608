// Control side. libsndfile format codes for the writer's formats.

import CSndFile

extension AudioFileFormat {
    /// `SF_INFO.format` for this container with `encoding` (ignored by the lossy formats;
    /// nil means the format's default); nil for the formats FFmpeg writes.
    func sndfileCode(encoding: AudioSampleEncoding?) -> Int32? {
        let pcm: Int
        switch encoding ?? defaultEncoding ?? .float32 {
        case .float32: pcm = Int(SF_FORMAT_FLOAT)
        case .int16: pcm = Int(SF_FORMAT_PCM_16)
        case .int24: pcm = Int(SF_FORMAT_PCM_24)
        }
        let code: Int
        switch self {
        case .wav: code = Int(SF_FORMAT_WAV) | pcm
        case .aiff: code = Int(SF_FORMAT_AIFF) | pcm
        case .caf: code = Int(SF_FORMAT_CAF) | pcm
        case .flac: code = Int(SF_FORMAT_FLAC) | pcm
        case .oggVorbis: code = Int(SF_FORMAT_OGG) | Int(SF_FORMAT_VORBIS)
        case .opus: code = Int(SF_FORMAT_OGG) | Int(SF_FORMAT_OPUS)
        case .mp3: code = Int(SF_FORMAT_MPEG) | Int(SF_FORMAT_MPEG_LAYER_III)
        case .aacM4A, .alacM4A, .aacADTS: return nil
        }
        return Int32(truncatingIfNeeded: code)
    }
}
