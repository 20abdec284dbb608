// Disk thread (opened and primed on the control side). Decodes a file incrementally, through
// libsndfile or FFmpeg as `AudioFileReader` would, for players that stream long files instead of
// preloading them; converts the rate on the fly (soxr in streaming mode); plays a region and
// goes back to its start for loops.
import Foundation

/// An open audio file read in chunks of interleaved float frames at a target rate.
///
/// Every format `AudioFileReader.load` reads streams: libsndfile's (WAV, AIFF, CAF, FLAC, Ogg
/// Vorbis, Opus, MP3, …) and FFmpeg's (AAC and ALAC in MP4/M4A, ADTS, …). The frames are those
/// `load(path:targetSampleRate:)` returns: gapless (priming and remainder removed) and, with a
/// target rate, converted by soxr at the same quality.
///
/// Regions and loops: `selectRegion` plays `startFrame ..< startFrame + frameCount` (frames at
/// `sampleRate`); `read` returns 0 at the region's end and `rewind` goes back to its start. Going
/// back seeks (libsndfile formats, MP4 tracks) or, for FFmpeg formats without frame-exact
/// timestamps (ADTS, Matroska, …), reopens the file and decodes up to the start.
///
/// One thread at a time (the control side to open and prime, then the disk thread).
public final class AudioFileStreamReader: @unchecked Sendable {
    // @unchecked: a decoder used by one thread at a time (the control side opens, then the disk thread reads).
    public let path: String
    public let channelCount: Int
    /// The file's own rate.
    public let sourceSampleRate: Double
    /// The rate frames are delivered at.
    public let sampleRate: Double
    /// Frames of the whole file at `sampleRate` (the header's count; an estimate for untagged MP3).
    public let frameCount: Int
    /// First frame of the selected region, at `sampleRate`.
    public private(set) var regionStart = 0
    /// Frames of the selected region at `sampleRate`.
    public private(set) var regionFrameCount: Int

    /// Output frames of rate conversion kept before a region start: the converter restarts there,
    /// and these frames let its filter settle (soxr HQ's filter is far shorter).
    static let conversionPrerollFrames = 2_048

    private var session: any StreamingSession
    /// True while the session has delivered nothing since it was opened.
    private var isSessionFresh = true
    private let converter: StreamRateConverter?
    /// Converted frames still to drop after a region seek (the converter's pre-roll).
    private var discardFrames = 0
    /// Frames left in this pass of the region; nil plays to the end of the file.
    private var remainingFrames: Int?
    /// Interleaved scratch for frames decoded and dropped.
    private var discardScratch: [Float] = []

    /// Opens `path`; `targetSampleRate` nil keeps the file's rate.
    ///
    /// - Throws: the errors of `AudioFileReader.info(path:)`, `.invalidArgument` for a bad target
    ///   rate, `.rateConversionFailed`.
    public init(path: String, targetSampleRate: Double? = nil) throws(AudioFileError) {
        self.path = path
        if let targetSampleRate, !(targetSampleRate.isFinite && targetSampleRate > 0) {
            throw .invalidArgument(
                path: path, reason: "target sample rate must be a positive number of Hz, not \(targetSampleRate)")
        }
        session = try AudioFileReader.openStreamingSession(path: path)
        channelCount = session.channelCount
        sourceSampleRate = session.sampleRate
        sampleRate = targetSampleRate ?? sourceSampleRate
        let sourceFrames = try session.frameCount()
        frameCount =
            sampleRate == sourceSampleRate
            ? sourceFrames : Int((Double(sourceFrames) * sampleRate / sourceSampleRate).rounded())
        regionFrameCount = frameCount
        converter =
            sampleRate == sourceSampleRate
            ? nil
            : try StreamRateConverter(from: sourceSampleRate, to: sampleRate, channelCount: channelCount, path: path)
    }

    /// Bytes of decode buffers this stream holds: the decoder's scratch, the converter's input
    /// and the discard scratch (the libraries' internal state is not counted).
    public var bufferBytes: Int {
        session.bufferBytes + (converter?.bufferBytes ?? 0) + discardScratch.count * MemoryLayout<Float>.size
    }

    /// Plays only `startFrame ..< startFrame + frameCount` (frames at `sampleRate`) and moves to
    /// `startFrame`. The region is also what `rewind` returns to.
    ///
    /// - Throws: `.regionOutOfRange`; the errors of `rewind`.
    public func selectRegion(startFrame: Int, frameCount count: Int) throws(AudioFileError) {
        guard startFrame >= 0, count > 0, startFrame <= frameCount - count else {
            throw .regionOutOfRange(path: path, startFrame: startFrame, frameCount: count, fileFrameCount: frameCount)
        }
        regionStart = startFrame
        regionFrameCount = count
        try rewind()
    }

    /// Goes back to the first frame of the region (the file's first frame unless a region is
    /// selected).
    ///
    /// - Throws: `.corruptData` / `.readFailed` when the decoder cannot seek or decode up to the
    ///   region's start, and the errors of reopening the file.
    public func rewind() throws(AudioFileError) {
        let isWholeFile = regionStart == 0 && regionFrameCount == frameCount
        remainingFrames = isWholeFile ? nil : regionFrameCount
        guard let converter else {
            try moveSession(to: regionStart)
            return
        }
        let (sourceStart, discard) = conversionStart(for: regionStart)
        try moveSession(to: sourceStart)
        converter.reset()
        discardFrames = discard
    }

    /// Decodes up to `frames` interleaved frames into `buffer`; returns how many (0 at the end of
    /// the region).
    ///
    /// - Throws: `.corruptData` for decoding errors, `.readFailed` for I/O errors,
    ///   `.rateConversionFailed`.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let wanted = min(frames, remainingFrames ?? Int.max)
        guard wanted > 0 else { return 0 }
        let produced: Int
        if let converter {
            let pull = { (source: UnsafeMutablePointer<Float>, count: Int) throws(AudioFileError) -> Int in
                try self.readSession(into: source, frames: count)
            }
            while discardFrames > 0 {
                let dropped = try withDiscardScratch(frames: discardFrames) { (scratch, count) throws(AudioFileError) in
                    try converter.read(into: scratch, frames: count, from: pull)
                }
                if dropped == 0 { break }
                discardFrames -= dropped
            }
            produced = try converter.read(into: buffer, frames: wanted, from: pull)
        } else {
            produced = try readSession(into: buffer, frames: wanted)
        }
        if let remaining = remainingFrames { remainingFrames = remaining - produced }
        return produced
    }

    // MARK: Helpers

    private func readSession(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        isSessionFresh = false
        return try session.readInterleaved(into: buffer, frames: frames)
    }

    /// Positions the session at source frame `frame`: a seek when it is exact, otherwise a fresh
    /// session decoded up to the frame.
    private func moveSession(to frame: Int) throws(AudioFileError) {
        if session.seeksExactly {
            try session.seek(toFrame: frame)
            isSessionFresh = false
            return
        }
        if !isSessionFresh {
            session = try AudioFileReader.openStreamingSession(path: path)
            isSessionFresh = true
        }
        var left = frame
        while left > 0 {
            let got = try withDiscardScratch(frames: left) { (scratch, count) throws(AudioFileError) in
                try readSession(into: scratch, frames: count)
            }
            guard got > 0 else {
                throw .regionOutOfRange(path: path, startFrame: frame, frameCount: nil, fileFrameCount: frame - left)
            }
            left -= got
        }
    }

    /// Where the converter starts for a region at output frame `start`: a source frame whose
    /// output position is a whole frame (so the restarted converter's output grid is the one a
    /// conversion of the whole file has) at least `conversionPrerollFrames` before `start`, and
    /// the output frames to drop from there.
    private func conversionStart(for start: Int) -> (sourceFrame: Int, discard: Int) {
        guard start > 0 else { return (0, 0) }
        let early = max(0, start - Self.conversionPrerollFrames)
        if let source = Int(exactly: sourceSampleRate), let target = Int(exactly: sampleRate) {
            // Output frames come in groups of target/g per source group of source/g.
            let divisor = Self.greatestCommonDivisor(source, target)
            let outputStep = target / divisor
            let groups = early / outputStep
            return (groups * (source / divisor), start - groups * outputStep)
        }
        let sourceFrame = Int((Double(early) * sourceSampleRate / sampleRate).rounded(.down))
        let outputFrame = Int((Double(sourceFrame) * sampleRate / sourceSampleRate).rounded())
        return (sourceFrame, max(0, start - outputFrame))
    }

    private static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return max(1, x)
    }

    /// Runs `body` with an interleaved scratch of at most 4,096 frames and `frames` capped to it.
    private func withDiscardScratch(
        frames: Int, _ body: (UnsafeMutablePointer<Float>, Int) throws(AudioFileError) -> Int
    ) throws(AudioFileError) -> Int {
        let capacity = 4_096
        if discardScratch.isEmpty { discardScratch = [Float](repeating: 0, count: capacity * channelCount) }
        return try discardScratch.withUnsafeMutableBufferPointer { (scratch) throws(AudioFileError) -> Int in
            try body(scratch.baseAddress!, min(frames, capacity))
        }
    }
}
