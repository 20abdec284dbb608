// Control side. The cheap damage checks of `AudioFileReader.inspect` for files libsndfile opens:
// the header's declared length against the bytes present, without decoding the audio.

import CSndFile

extension SndFileReader {
    /// Most bytes an MP3 stream may fall short of its tag's byte count before it counts as cut:
    /// two of the largest MPEG-1 Layer III frames (320 kbit/s at 32 kHz, padded).
    private static let mpegByteSlack = 2 * 1441

    /// What the header claims that the data cannot hold, or nil when nothing is found.
    ///
    /// WAV, RF64, Wave64, AIFF and CAF: the declared frame count against the frames present.
    /// FLAC: STREAMINFO's total against the last frame (`FLACTailCheck`). Ogg Vorbis, Opus and
    /// Ogg FLAC: the last page (`OggTailCheck`). MP3: the Xing/Info/VBRI tag's byte count against
    /// the bytes of stream present.
    func damage() -> AudioFileDamage? {
        if let declared = declaredFrameCount, let reported = reportedFrameCount, declared > reported {
            return AudioFileDamage(
                kind: .truncated, expectedFrames: declared, availableFrames: reported,
                reason: "the header declares \(declared) frames but only \(reported) are present")
        }
        let reader = ByteReader(fd: fd, fileSize: fileSize)
        switch SndFileLibrary.major(format) {
        case Int(SF_FORMAT_FLAC):
            return FLACTailCheck.damage(reader)
        case Int(SF_FORMAT_OGG):
            return OggTailCheck.damage(reader, decodableFrames: reportedFrameCount, sampleRate: sampleRate)
        case Int(SF_FORMAT_MPEG):
            return mpegDamage(reader)
        default:
            return nil
        }
    }

    /// An MP3 whose tag declares more bytes of stream than the file holds.
    private func mpegDamage(_ reader: ByteReader) -> AudioFileDamage? {
        guard let tag = mpegLengthTag, let declared = tag.declaredStreamBytes, declared > 0 else { return nil }
        let present = tag.presentStreamBytes(reader)
        guard present + Self.mpegByteSlack < declared else { return nil }
        let expected = reportedFrameCount
        let estimate = expected.map { Int((Double($0) * Double(max(0, present)) / Double(declared)).rounded()) }
        var frames = ""
        if let expected, let estimate { frames = " (about \(estimate) of \(expected) frames)" }
        return AudioFileDamage(
            kind: .truncated, expectedFrames: expected, availableFrames: estimate,
            reason: "the MP3 length tag declares \(declared) bytes of audio stream but only \(max(0, present)) "
                + "are present\(frames)")
    }
}
