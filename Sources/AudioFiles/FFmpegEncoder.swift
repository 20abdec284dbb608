// Control side (or a recorder's disk thread). Encodes AAC or ALAC with libavcodec and muxes it into
// M4A (or raw ADTS) with libavformat, for AudioFileWriter. Not thread-safe: the writer's lock
// serialises every call.

import CFFmpeg
import Foundation

/// One AAC or ALAC encoding session writing to a descriptor the writer opened.
///
/// Gapless metadata: FFmpeg's `aac` encoder delays its output by 1024 frames and says so in
/// `initial_padding`; the MP4 muxer turns that into an edit list (media time 1024) whose duration
/// is the exact number of frames written, because the movie timescale is set to the sample rate
/// (FFmpeg's default of 1000 would round the length to a millisecond). The last packet's
/// duration is trimmed to the real end as well. `AudioFileReader` reads both back and returns
/// exactly the frames written. ALAC has no priming; its last packet is simply shorter.
/// A fragmented file (recordings) has no edit list: its AAC layout goes into an iTunSMPB tag,
/// written as a placeholder with the index and completed in place by `finish()`.
final class FFmpegEncoder {
    private let path: String
    private let channelCount: Int
    private let io: FFmpegFileIO
    private var output: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var stream: UnsafeMutablePointer<AVStream>?
    /// How samples are stored in the encoder's frames.
    private var sampleFormat = AV_SAMPLE_FMT_FLTP
    /// Frames per encoder frame (AAC: 1024; ALAC: 4096).
    private var frameSize = 0
    /// Planar float staging for a partial encoder frame: `frameSize` frames per channel.
    private var staging: UnsafeMutablePointer<Float>?
    private var stagedFrames = 0
    private var nextTimestamp: Int64 = 0
    private var isHeaderWritten = false
    /// Fragmented AAC: the iTunSMPB tag written with the index, to complete at `finish()`.
    private var gaplessPlaceholder: GaplessTag?
    /// AAC packets written (each 1024 frames).
    private var packetsWritten = 0

    /// Channel layouts by channel count (1…8): the ones FFmpeg's ALAC encoder lists, which its AAC
    /// encoder also takes. FFmpeg's generic default would make 3 channels "2.1" (with an LFE);
    /// here 3 is "3.0" (L R C). 6 and 8 are 5.1 and 7.1: their fourth channel is LFE, which AAC
    /// keeps only below about 120 Hz.
    private static let layoutNames = ["mono", "stereo", "3.0", "4.0", "5.0", "5.1", "6.1(back)", "7.1(wide)"]

    /// Prepares the encoder and writes the container header.
    ///
    /// - Parameters:
    ///   - fd: an open, writable, empty regular file (not owned).
    ///   - format: `.aacM4A`, `.alacM4A` or `.aacADTS`.
    ///   - sampleRate: Hz, already validated against `format.supportedSampleRates`.
    ///   - encoding: ALAC: `.int16` or `.int24`; ignored for AAC.
    ///   - bitRate: AAC bits per second (all channels); ignored for ALAC.
    ///   - isFragmented: M4A only: write an empty index first and then a fragment (`moof` + `mdat`)
    ///     every `fragmentDuration`, so that the file is readable up to its last complete fragment
    ///     if the process dies before `finish()`.
    /// - Throws: `.invalidArgument` when FFmpeg refuses the parameters (for example a channel
    ///   count without a standard layout), `.unsupportedFormat` when this FFmpeg lacks the
    ///   encoder or muxer, `.writeFailed` when writing the header fails.
    init(
        fd: Int32, path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int,
        encoding: AudioSampleEncoding?, bitRate: Int, isFragmented: Bool = false
    ) throws(AudioFileError) {
        FFmpegLibrary.prepare()
        self.path = path
        self.channelCount = channelCount
        guard let io = FFmpegFileIO(fd: fd, isWritable: true) else {
            throw .writeFailed(path: path, reason: "FFmpeg could not allocate an I/O context")
        }
        self.io = io

        let muxerName = format == .aacADTS ? "adts" : "ipod"
        FFmpegLibrary.clearLastMessage()
        var status = avformat_alloc_output_context2(&output, nil, muxerName, nil)
        guard status >= 0, let output else {
            throw .unsupportedFormat(
                path: path, reason: "this FFmpeg has no \(muxerName) muxer: \(FFmpegLibrary.describe(status))")
        }
        let isALAC = format == .alacM4A
        let encoderName = isALAC ? "alac" : "aac"
        guard let encoder = avcodec_find_encoder_by_name(encoderName) else {
            throw .unsupportedFormat(path: path, reason: "this FFmpeg has no \(encoderName) encoder")
        }
        codec = avcodec_alloc_context3(encoder)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        stream = avformat_new_stream(output, nil)
        guard let codec, let frame, packet != nil, let stream else {
            throw .writeFailed(path: path, reason: "FFmpeg could not allocate an encoder")
        }

        sampleFormat = !isALAC ? AV_SAMPLE_FMT_FLTP : (encoding == .int16 ? AV_SAMPLE_FMT_S16P : AV_SAMPLE_FMT_S32P)
        codec.pointee.sample_fmt = sampleFormat
        codec.pointee.sample_rate = Int32(sampleRate)
        var layout = AVChannelLayout()
        if channelCount <= Self.layoutNames.count,
            av_channel_layout_from_string(&layout, Self.layoutNames[channelCount - 1]) >= 0
        {
            codec.pointee.ch_layout = layout
        } else {
            av_channel_layout_default(&codec.pointee.ch_layout, Int32(channelCount))
        }
        codec.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        codec.pointee.thread_count = 1
        if isALAC {
            codec.pointee.bits_per_raw_sample = encoding == .int16 ? 16 : 24
        } else {
            codec.pointee.bit_rate = Int64(bitRate)
        }
        if output.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            codec.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        FFmpegLibrary.clearLastMessage()
        status = avcodec_open2(codec, encoder, nil)
        guard status >= 0 else {
            throw .invalidArgument(
                path: path,
                reason: "FFmpeg's \(encoderName) encoder refuses \(channelCount) channels at \(sampleRate) Hz: "
                    + FFmpegLibrary.describe(status))
        }
        frameSize = codec.pointee.frame_size > 0 ? Int(codec.pointee.frame_size) : 4096
        staging = .allocate(capacity: frameSize * channelCount)

        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.format = sampleFormat.rawValue
        frame.pointee.sample_rate = Int32(sampleRate)
        status = av_channel_layout_copy(&frame.pointee.ch_layout, &codec.pointee.ch_layout)
        if status >= 0 { status = av_frame_get_buffer(frame, 0) }
        if status >= 0 { status = avcodec_parameters_from_context(stream.pointee.codecpar, codec) }
        guard status >= 0 else {
            throw .writeFailed(path: path, reason: "FFmpeg could not prepare frames: \(FFmpegLibrary.describe(status))")
        }
        stream.pointee.time_base = codec.pointee.time_base

        output.pointee.pb = io.context
        output.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var options: OpaquePointer?
        if format != .aacADTS {
            // Edit-list duration in frames, not milliseconds: exact gapless length.
            av_dict_set(&options, "movie_timescale", String(sampleRate), 0)
        }
        if isFragmented {
            // The index is written first, when the length is unknown: an iTunSMPB placeholder
            // (priming known, length 0 = unknown) is filled in by `finish()`.
            if !isALAC {
                gaplessPlaceholder = GaplessTag(primingFrameCount: Int(codec.pointee.initial_padding))
                av_dict_set(&output.pointee.metadata, "iTunSMPB", gaplessPlaceholder!.text, 0)
            }
            av_dict_set(&options, "movflags", "empty_moov+default_base_moof+use_metadata_tags", 0)
            av_dict_set(&options, "frag_duration", String(Int(Self.fragmentDuration * 1_000_000)), 0)
        }
        FFmpegLibrary.clearLastMessage()
        status = avformat_write_header(output, &options)
        av_dict_free(&options)
        guard status >= 0 else { throw writeError("writing the header failed", status) }
        isHeaderWritten = true
    }

    deinit {
        if let output { avformat_free_context(output) }
        avcodec_free_context(&codec)
        av_frame_free(&frame)
        av_packet_free(&packet)
        staging?.deallocate()
    }

    /// Encodes `frames` interleaved frames (staged until a whole encoder frame is available).
    ///
    /// - Throws: `.writeFailed` when encoding or writing fails.
    func write(interleaved samples: UnsafeBufferPointer<Float>, frames: Int) throws(AudioFileError) {
        guard let staging, let base = samples.baseAddress else { return }
        var done = 0
        while done < frames {
            let count = min(frameSize - stagedFrames, frames - done)
            for channel in 0..<channelCount {
                let plane = staging + channel * frameSize + stagedFrames
                var source = base + done * channelCount + channel
                for index in 0..<count {
                    plane[index] = source.pointee
                    source += channelCount
                }
            }
            stagedFrames += count
            done += count
            if stagedFrames == frameSize { try encodeStaged() }
        }
    }

    /// Seconds of audio per fragment of a fragmented M4A: at most this much (plus the time between
    /// `flush()` calls) is lost when the process dies.
    static let fragmentDuration = 0.25

    /// Hands FFmpeg's buffered bytes to the file (completed fragments reach the disk).
    ///
    /// - Throws: `.writeFailed` when a write failed.
    func flush() throws(AudioFileError) {
        guard isHeaderWritten else { return }
        avio_flush(io.context)
        if let context = io.context, context.pointee.error < 0 {
            throw writeError("writing failed", context.pointee.error)
        }
    }

    /// Encodes the last partial frame, flushes the encoder and writes the trailer (the MP4 index
    /// with the edit list). The file is complete only after this returns.
    ///
    /// - Throws: `.writeFailed`.
    func finish() throws(AudioFileError) {
        guard isHeaderWritten else { return }
        if stagedFrames > 0 { try encodeStaged() }
        FFmpegLibrary.clearLastMessage()
        let status = avcodec_send_frame(codec, nil)
        guard status >= 0 || status == FFmpegLibrary.endOfFile else {
            throw writeError("flushing the encoder failed", status)
        }
        try drainPackets()
        isHeaderWritten = false
        FFmpegLibrary.clearLastMessage()
        let trailer = av_write_trailer(output)
        guard trailer >= 0 else { throw writeError("writing the index failed", trailer) }
        avio_flush(io.context)
        if let context = io.context, context.pointee.error < 0 {
            throw writeError("writing failed", context.pointee.error)
        }
        if let placeholder = gaplessPlaceholder {
            var complete = placeholder
            complete.validFrameCount = Int(nextTimestamp)
            complete.remainderFrameCount = max(
                0, packetsWritten * frameSize - placeholder.primingFrameCount - Int(nextTimestamp))
            guard io.replace(Array(placeholder.text.utf8), with: Array(complete.text.utf8)) else {
                throw .writeFailed(path: path, reason: "could not complete the gapless tag in the index")
            }
        }
    }

    /// Converts the staged frames to the encoder's sample format and sends them.
    private func encodeStaged() throws(AudioFileError) {
        guard let frame, let staging else { return }
        FFmpegLibrary.clearLastMessage()
        var status = av_frame_make_writable(frame)
        guard status >= 0 else { throw writeError("preparing a frame failed", status) }
        frame.pointee.nb_samples = Int32(stagedFrames)
        frame.pointee.pts = nextTimestamp
        for channel in 0..<channelCount {
            let source = staging + channel * frameSize
            guard let plane = frame.pointee.extended_data[channel] else { continue }
            switch sampleFormat {
            case AV_SAMPLE_FMT_S16P:
                let target = UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Int16.self)
                for index in 0..<stagedFrames { target[index] = Self.quantize(source[index], bits: 16) }
            case AV_SAMPLE_FMT_S32P:
                // 24-bit samples in the top bits of 32, as FFmpeg's ALAC encoder expects.
                let target = UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Int32.self)
                for index in 0..<stagedFrames {
                    let value: Int32 = Self.quantize(source[index], bits: 24)
                    target[index] = value << 8
                }
            default:
                UnsafeMutableRawPointer(plane).copyMemory(
                    from: source, byteCount: stagedFrames * MemoryLayout<Float>.size)
            }
        }
        nextTimestamp += Int64(stagedFrames)
        stagedFrames = 0
        status = avcodec_send_frame(codec, frame)
        guard status >= 0 else { throw writeError("encoding failed", status) }
        try drainPackets()
    }

    /// Writes every packet the encoder has ready.
    private func drainPackets() throws(AudioFileError) {
        guard let packet, let stream, let codec else { return }
        while true {
            FFmpegLibrary.clearLastMessage()
            let status = avcodec_receive_packet(codec, packet)
            if status == FFmpegLibrary.again || status == FFmpegLibrary.endOfFile { return }
            guard status >= 0 else { throw writeError("encoding failed", status) }
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            packetsWritten += 1
            let written = av_interleaved_write_frame(output, packet)
            guard written >= 0 else { throw writeError("writing a packet failed", written) }
        }
    }

    /// `sample` clipped to [-1, 1] and rounded to a signed `bits`-bit integer
    /// (-1 → -2^(bits-1), 1 → 2^(bits-1) - 1), the inverse of the reader's scaling.
    private static func quantize<T: FixedWidthInteger>(_ sample: Float, bits: Int) -> T {
        let scale = Float(1 << (bits - 1))
        let value = (max(-1, min(1, sample)) * scale).rounded()
        return T(max(-scale, min(scale - 1, value)))
    }

    /// `.writeFailed` with the operating system's reason when a write failed, FFmpeg's otherwise.
    private func writeError(_ what: String, _ code: Int32) -> AudioFileError {
        let reason = io.writeErrno != 0 ? String(cString: strerror(io.writeErrno)) : FFmpegLibrary.describe(code)
        return .writeFailed(path: path, reason: "\(what): \(reason)")
    }
}

/// An iTunes `iTunSMPB` gapless tag of fixed width, so that a placeholder written with a fragmented
/// file's index can be overwritten in place by the complete tag: " 00000000 PPPPPPPP RRRRRRRR
/// VVVVVVVVVVVVVVVV" (priming, remainder, valid frames in hexadecimal; a valid count of 0 means
/// "unknown" to `GaplessLayout`).
struct GaplessTag {
    var primingFrameCount: Int
    var remainderFrameCount = 0
    var validFrameCount = 0

    var text: String {
        func hex(_ value: Int, _ width: Int) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return " 00000000 \(hex(primingFrameCount, 8)) \(hex(remainderFrameCount, 8)) \(hex(validFrameCount, 16))"
    }
}
