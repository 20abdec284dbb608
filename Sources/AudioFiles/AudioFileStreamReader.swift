// Disk thread. Decodes a file incrementally (libsndfile) and converts its rate on the fly (soxr in
// streaming mode), for players that stream long files instead of preloading them.
import CSndFile
import CSoxr
import Foundation

/// An open audio file read in chunks of interleaved float frames at a target rate.
///
/// One thread at a time (the control side to open and prime, then the disk thread). soxr's streaming
/// mode is delay-compensated: after the final flush the output holds round(frames × target/source)
/// frames, matching `AudioFileReader.load(path:targetSampleRate:)`.
public final class AudioFileStreamReader: @unchecked Sendable {
    public let path: String
    public let channelCount: Int
    /// The file's own rate.
    public let sourceSampleRate: Double
    /// The rate frames are delivered at.
    public let sampleRate: Double
    /// Frames the stream delivers at `sampleRate`.
    public let frameCount: Int
    private var file: OpaquePointer?
    private var resampler: soxr_t?
    private var input: [Float]
    private var inputFrames = 0
    private var inputOffset = 0
    private var sourceEnded = false
    private var flushed = false

    /// Opens `path`; `targetSampleRate` nil keeps the file's rate.
    public init(path: String, targetSampleRate: Double? = nil) throws(AudioFileError) {
        self.path = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .fileNotFound(path: path) }
        guard !isDirectory.boolValue else { throw .notARegularFile(path: path, kind: "directory") }
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            let text = String(cString: sf_strerror(nil))
            throw .unsupportedFormat(path: path, reason: text)
        }
        sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        guard info.channels > 0, info.samplerate > 0, info.frames >= 0 else {
            sf_close(handle)
            throw .corruptData(path: path, reason: "the header describes no playable audio")
        }
        file = handle
        channelCount = Int(info.channels)
        sourceSampleRate = Double(info.samplerate)
        sampleRate = targetSampleRate ?? sourceSampleRate
        frameCount = Int((Double(info.frames) * sampleRate / sourceSampleRate).rounded())
        input = [Float](repeating: 0, count: 4096 * channelCount)
        if sampleRate != sourceSampleRate {
            var error: soxr_error_t?
            var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            resampler = soxr_create(sourceSampleRate, sampleRate, UInt32(channelCount), &error, &io, &quality, nil)
            if resampler == nil {
                sf_close(handle)
                file = nil
                throw .rateConversionFailed(path: path, targetSampleRate: sampleRate,
                                            reason: error.map { String(cString: $0) } ?? "soxr_create failed")
            }
        }
    }

    deinit {
        if let resampler { soxr_delete(resampler) }
        if let file { sf_close(file) }
    }

    /// Decodes up to `frames` interleaved frames into `buffer`; returns how many (0 at the end).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws -> Int {
        guard let file, frames > 0 else { return 0 }
        guard let resampler else { return try readSource(file, into: buffer, frames: frames) }
        var produced = 0
        while produced == 0 {
            if inputOffset >= inputFrames && !sourceEnded {
                let capacity = input.count / channelCount
                inputFrames = try input.withUnsafeMutableBufferPointer { try readSource(file, into: $0.baseAddress!, frames: capacity) }
                inputOffset = 0
                if inputFrames == 0 { sourceEnded = true }
            }
            var consumed = 0
            var made = 0
            let out = buffer
            let error: soxr_error_t?
            if sourceEnded {
                if flushed { return 0 }
                error = soxr_process(resampler, nil, 0, nil, out, frames, &made)
                if made == 0 { flushed = true }
            } else {
                error = input.withUnsafeBufferPointer { inputBuffer in
                    soxr_process(resampler, inputBuffer.baseAddress! + inputOffset * channelCount, inputFrames - inputOffset,
                                 &consumed, out, frames, &made)
                }
                inputOffset += consumed
            }
            if let error {
                throw AudioFileError.rateConversionFailed(path: path, targetSampleRate: sampleRate, reason: String(cString: error))
            }
            produced = made
            if sourceEnded && flushed { break }
        }
        return produced
    }

    /// Goes back to the first frame.
    public func rewind() throws {
        guard let file else { return }
        if sf_seek(file, 0, SEEK_SET) < 0 {
            throw AudioFileError.readFailed(path: path, reason: "cannot seek to the start")
        }
        if let resampler { soxr_clear(resampler) }
        inputFrames = 0
        inputOffset = 0
        sourceEnded = false
        flushed = false
    }

    private func readSource(_ file: OpaquePointer, into buffer: UnsafeMutablePointer<Float>, frames: Int) throws -> Int {
        let got = Int(sf_readf_float(file, buffer, sf_count_t(frames)))
        if got < frames && sf_error(file) != 0 {
            throw AudioFileError.readFailed(path: path, reason: String(cString: sf_strerror(file)))
        }
        return got
    }
}
