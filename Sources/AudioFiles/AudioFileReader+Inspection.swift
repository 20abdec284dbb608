// Control side. `AudioFileReader.inspect`: a file's header, whether its data can hold what the
// header claims, and optionally a full decode that counts the frames. What `soundstage info` prints.

/// Everything `AudioFileReader.inspect` learns about one file.
public struct AudioFileInspection: Sendable {
    /// The path, as given.
    public var path: String
    /// The header's description; nil when it could not be read (see `error` and `damage`).
    public var info: AudioFileInfo?
    /// What is wrong with the file, from the cheap checks or the full decode; nil when nothing is.
    public var damage: AudioFileDamage?
    /// Why the file could not be read at all when that is not damage (not found, permission
    /// denied, unsupported format); nil otherwise.
    public var error: AudioFileError?
    /// The full decode, when one was asked for and the file opened.
    public var verification: AudioFileVerification?

    /// True when the file was read and nothing is wrong with it.
    public var isIntact: Bool { info != nil && damage == nil && error == nil }
}

/// The result of decoding a whole file.
public struct AudioFileVerification: Sendable, Equatable {
    /// Valid frames decoded (priming and remainder removed, as `load` returns them), up to the
    /// end of the stream or to the first error.
    public var decodedFrameCount: Int
    /// The first decoding error, if any; decoding stops there.
    public var error: AudioFileError?
    /// The frame at which `error` occurred (the frames decoded before it).
    public var errorFrame: Int? { error == nil ? nil : decodedFrameCount }
}

extension AudioFileReader {
    /// Frames per read of a verifying decode.
    private static let verifyChunkFrames = 4_096

    /// Reads a file's header and checks that its data can hold what the header claims; with
    /// `verify`, also decodes the whole file and compares the frames decoded with the header.
    ///
    /// The checks without `verify` read at most about 1 MiB and decode nothing (see
    /// `SndFileReader.damage()`). A truncated WAV, AIFF, CAF, RF64 or Wave64 is still described
    /// (with the frames libsndfile finds), and so is an MP4 whose sample table runs past the end of
    /// the file, so `info` can show both numbers. With `verify`, a file
    /// whose decoded length differs from a declared length (for MP3 by more than the 1152 + 529
    /// frames `load` allows), or that fails to decode, is damaged.
    /// An MP3 without a length tag and FFmpeg formats other than MP4 declare no length, so only
    /// a decoding error makes them damaged. Never throws: failures are in the result.
    public static func inspect(path: String, verify: Bool = false) -> AudioFileInspection {
        var result = AudioFileInspection(path: path)
        let session: any DecodingSession
        do {
            session = try openInspectionSession(path: path)
            result.info = try session.describe()
        } catch {
            result.damage = AudioFileDamage(error)
            result.error = result.damage == nil ? error : nil
            return result
        }
        result.damage = session.damage()
        guard verify, let info = result.info else { return result }
        let verification = decodeAll(path: path)
        result.verification = verification
        if result.damage == nil {
            result.damage = verificationDamage(verification, info: info, tolerance: session.truncationTolerance)
        }
        return result
    }

    /// Opens libsndfile or FFmpeg without their declared-length refusal.
    private static func openInspectionSession(path: String) throws(AudioFileError) -> any DecodingSession {
        try openEither(
            path: path,
            sndfile: { () throws(AudioFileError) -> any DecodingSession in
                try SndFileReader(path: path, checksDeclaredLength: false)
            },
            ffmpeg: { () throws(AudioFileError) -> any DecodingSession in
                try FFmpegReader(path: path, checksDeclaredLength: false)
            })
    }

    /// Decodes the whole file with a fresh streaming session, counting frames.
    static func decodeAll(path: String) -> AudioFileVerification {
        var decoded = 0
        do {
            let session = try openEither(
                path: path,
                sndfile: { () throws(AudioFileError) -> any StreamingSession in
                    try SndFileReader(path: path, checksDeclaredLength: false)
                },
                ffmpeg: { () throws(AudioFileError) -> any StreamingSession in
                    try FFmpegReader(path: path, skipsPrimingManually: true, checksDeclaredLength: false)
                })
            var buffer = [Float](repeating: 0, count: verifyChunkFrames * session.channelCount)
            while true {
                let got = try buffer.withUnsafeMutableBufferPointer { (pointer) throws(AudioFileError) -> Int in
                    try session.readInterleaved(into: pointer.baseAddress!, frames: verifyChunkFrames)
                }
                if got <= 0 { break }
                decoded += got
            }
            return AudioFileVerification(decodedFrameCount: decoded, error: nil)
        } catch {
            return AudioFileVerification(decodedFrameCount: decoded, error: error)
        }
    }

    /// The damage a full decode shows: an error, or (for a declared length) a count that differs
    /// by more than `tolerance` (0 for exact lengths; an MP3 tag without gapless fields counts
    /// whole frames; nil when no length is declared).
    private static func verificationDamage(
        _ verification: AudioFileVerification, info: AudioFileInfo, tolerance: Int?
    ) -> AudioFileDamage? {
        let decoded = verification.decodedFrameCount
        if let error = verification.error {
            return AudioFileDamage(
                kind: .damaged, expectedFrames: info.frameCount, availableFrames: decoded,
                reason: "decoding fails at frame \(decoded) of \(info.frameCount): \(AudioFileDamage.clause(of: error))"
            )
        }
        guard let tolerance, abs(decoded - info.frameCount) > tolerance else { return nil }
        return AudioFileDamage(
            kind: decoded < info.frameCount ? .truncated : .damaged, expectedFrames: info.frameCount,
            availableFrames: decoded,
            reason: "the header declares \(info.frameCount) frames but a full decode gives \(decoded)")
    }
}
