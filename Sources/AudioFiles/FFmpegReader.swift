// Control side. One open FFmpeg decoding session (libavformat, libavcodec, libswresample): the
// reader's fallback for files libsndfile does not recognise, above all AAC and ALAC in MP4/M4A.
// Used by AudioFileReader; never shared between threads.

import CFFmpeg
import Foundation

/// An open file being decoded by FFmpeg, with its gapless layout worked out at open.
///
/// `read` always decodes from the start of the stream (no seeking): AAC and ALAC decode at
/// hundreds of times real time, and starting at the first packet keeps priming removal exact.
/// A session decodes once; `AudioFileReader` opens a new one per call. A streaming session
/// (`FFmpegReader+Streaming.swift`) instead decodes incrementally and can seek.
final class FFmpegReader {
    let path: String
    let sampleRate: Double
    let channelCount: Int
    let layout: GaplessLayout

    private let descriptor: FileDescriptor
    private let fileSize: Int
    let input: FFmpegInput
    let decoder: FFmpegDecoder
    let streamIndex: Int32
    /// The decoder's next packet is already in `decoder.packet` (the first one is read at open for
    /// its priming).
    var hasPendingPacket: Bool
    private var hasDecoded = false
    /// Frames counted by a full decode, for streams whose length the container does not give.
    private var decodedFrameCount: Int?
    /// Priming frames this reader drops itself, because FFmpeg did not (an iTunSMPB tag that
    /// FFmpeg's demuxer does not apply, e.g. one stored as QuickTime `mdta` metadata).
    private let manualSkipFrameCount: Int
    /// The timestamp (in the stream's time base) of valid frame 0, when timestamps count frames
    /// exactly (an MP4 track whose time base is 1 / sample rate); nil otherwise. Streaming seeks
    /// only when it is known.
    let validZeroTimestamp: Int64?
    /// Frames decoded and dropped before a seek target, so the decoder's inter-packet state
    /// (the MDCT overlap of AAC) is rebuilt: 0 for lossless codecs, 4 packets for lossy ones.
    let seekPrerollFrameCount: Int
    /// The incremental decoder's position (streaming sessions only).
    var cursor = FFmpegStreamCursor()

    private let formatName: String
    private let codecName: String
    private let writerFormat: AudioFileFormat?
    private let bitDepth: Int?
    private let declaredBitRate: Int?
    /// An MP4 whose sample table or edit list claims more than the file holds, when the session
    /// was opened to describe it anyway (`checksDeclaredLength` false).
    private var sampleTableDamage: AudioFileDamage?

    /// Opens `path` for decoding.
    ///
    /// - Throws: `.fileNotFound`, `.permissionDenied`, `.notARegularFile`, `.emptyFile`,
    ///   `.readFailed`, `.unsupportedFormat` (not recognised, no audio stream, no decoder),
    ///   `.corruptData` (header rejected, no packets) or `.truncated` (an MP4 whose sample table
    ///   points past the end of the file, or whose edit list claims more frames than it holds).
    /// - Parameter skipsPrimingManually: the decoder delivers the priming frames (FFmpeg's
    ///   `AV_CODEC_FLAG2_SKIP_MANUAL`) and the caller drops them by position, as the streaming
    ///   session does so that a seek back to the start needs no help from the demuxer.
    /// - Parameter checksDeclaredLength: throw `.truncated` for an MP4 that claims more than it
    ///   holds; false for `AudioFileReader.inspect`, which reports it as damage.
    init(path: String, skipsPrimingManually: Bool = false, checksDeclaredLength: Bool = true) throws(AudioFileError) {
        self.path = path
        let (fd, fileSize) = try InputFile.open(path: path)
        descriptor = FileDescriptor(fd)
        self.fileSize = fileSize
        input = try FFmpegInput(fd: fd, path: path)
        guard let context = input.context else {
            throw .readFailed(path: path, reason: "FFmpeg returned no demuxer")
        }
        let demuxerLabel = "FFmpeg (\(input.demuxerName))"

        FFmpegLibrary.clearLastMessage()
        let infoStatus = avformat_find_stream_info(context, nil)
        if infoStatus < 0 {
            throw .corruptData(path: path, reason: "\(demuxerLabel): \(FFmpegLibrary.describe(infoStatus))")
        }
        var codec: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0)
        if index == FFmpegLibrary.streamNotFound {
            throw .unsupportedFormat(path: path, reason: "\(demuxerLabel): the file has no audio stream")
        }
        guard index >= 0, let stream = input.stream(at: index), let parameters = stream.pointee.codecpar else {
            if index == FFmpegLibrary.decoderNotFound, let id = Self.bestAudioCodecID(context) {
                throw .unsupportedFormat(
                    path: path, reason: "\(demuxerLabel): this FFmpeg has no decoder for \(Self.codecLongName(id))")
            }
            throw .unsupportedFormat(path: path, reason: "\(demuxerLabel): \(FFmpegLibrary.describe(index))")
        }
        guard let codec else {
            let name = Self.codecLongName(parameters.pointee.codec_id)
            throw .unsupportedFormat(path: path, reason: "\(demuxerLabel): this FFmpeg has no decoder for \(name)")
        }
        streamIndex = index
        for other in 0..<Int32(context.pointee.nb_streams) where other != index {
            input.stream(at: other)?.pointee.discard = AVDISCARD_ALL
        }
        decoder = try FFmpegDecoder(
            stream: stream, codec: codec, skipsPrimingManually: skipsPrimingManually, path: path)
        guard let codecContext = decoder.codec else {
            throw .readFailed(path: path, reason: "FFmpeg returned no decoder")
        }
        let rate = codecContext.pointee.sample_rate
        let channels = Int(codecContext.pointee.ch_layout.nb_channels)
        guard rate > 0, channels > 0, channels <= 1024 else {
            throw .corruptData(
                path: path, reason: "\(demuxerLabel): the stream gives \(rate) Hz and \(channels) channels")
        }
        sampleRate = Double(rate)
        channelCount = channels

        // Read the first packet now: its skip-samples side data carries the priming.
        hasPendingPacket = try Self.readPacket(
            input: input, into: decoder.packet, streamIndex: index, path: path, position: 0)
        guard hasPendingPacket else {
            throw .corruptData(path: path, reason: "\(demuxerLabel): the audio stream has no packets")
        }
        let priming = Self.skipSamples(of: decoder.packet)
        let firstTimestamp = decoder.packet!.pointee.pts

        let codecID = parameters.pointee.codec_id
        if input.isMPEG4 {
            let table = try Self.sampleTable(fd: fd, fileSize: fileSize, input: input, streamIndex: index, path: path)
            let smpb = input.metadata("iTunSMPB").flatMap(GaplessLayout.ITunesSMPB.init)
            let edited = Self.frames(stream.pointee.duration, timeBase: stream.pointee.time_base, rate: rate)
            let manualSkip = priming == 0 ? smpb?.primingFrameCount ?? 0 : 0
            manualSkipFrameCount = manualSkip
            // No edit list was applied, so FFmpeg's duration still counts the priming this reader drops.
            let editedWithoutPriming = edited.map { $0 - manualSkip }
            layout = GaplessLayout.mpeg4(
                primingFrameCount: priming + manualSkip, editedFrames: editedWithoutPriming,
                rawFrames: table?.totalFrames,
                packetCount: table?.packetCount ?? 0, frameSize: Int(parameters.pointee.frame_size), smpb: smpb,
                isWrittenByLibavformat: input.metadata("encoder")?.hasPrefix("Lavf") ?? false,
                sampleRate: sampleRate)
            if let table, let valid = layout.validFrameCount {
                do throws(AudioFileError) {
                    try Self.checkComplete(
                        table: table, validFrames: valid, priming: layout.primingFrameCount, path: path)
                } catch {
                    guard !checksDeclaredLength, let damage = AudioFileDamage(error) else { throw error }
                    sampleTableDamage = damage
                }
            }
        } else {
            manualSkipFrameCount = 0
            layout = GaplessLayout(primingFrameCount: priming, validFrameCount: nil, remainderFrameCount: 0)
        }

        let writer: AudioFileFormat? =
            switch (input.isMPEG4, input.demuxerName, codecID) {
            case (true, _, AV_CODEC_ID_AAC): .aacM4A
            case (true, _, AV_CODEC_ID_ALAC): .alacM4A
            case (false, "aac", AV_CODEC_ID_AAC): .aacADTS
            default: nil
            }
        writerFormat = writer
        formatName = writer?.displayName ?? Self.containerName(input)
        codecName = Self.codecName(parameters.pointee)
        let isLossless = (avcodec_descriptor_get(codecID)?.pointee.props ?? 0) & AV_CODEC_PROP_LOSSLESS != 0
        seekPrerollFrameCount = isLossless ? 0 : 4 * max(1024, Int(parameters.pointee.frame_size))
        let timeBase = stream.pointee.time_base
        validZeroTimestamp =
            input.isMPEG4 && timeBase.num == 1 && timeBase.den == rate && firstTimestamp != Int64.min
            ? firstTimestamp + Int64(layout.primingFrameCount) : nil
        let rawBits = Int(parameters.pointee.bits_per_raw_sample)
        bitDepth = isLossless && rawBits > 0 ? rawBits : nil
        declaredBitRate = parameters.pointee.bit_rate > 0 ? Int(parameters.pointee.bit_rate) : nil
    }

    /// Frame count: the valid frames, from the container when it says (MP4), otherwise counted
    /// by decoding the whole stream once with a second session.
    func frameCount() throws(AudioFileError) -> Int {
        if let valid = layout.validFrameCount { return valid }
        if let decodedFrameCount { return decodedFrameCount }
        let counted = try FFmpegReader(path: path).decodeAll(startFrame: 0, endFrame: Int.max, keep: false).frames
        decodedFrameCount = counted
        return counted
    }

    /// 0 when the container gives the exact length (MP4), nil when any decoded length is accepted.
    var truncationTolerance: Int? {
        layout.validFrameCount == nil ? nil : 0
    }

    /// Header description; the frame count as in `frameCount()`.
    func describe() throws(AudioFileError) -> AudioFileInfo {
        let frames = try frameCount()
        var bitRate = declaredBitRate
        if bitRate == nil, frames > 0 {
            bitRate = Int((Double(fileSize) * 8 * sampleRate / Double(frames)).rounded())
        }
        return AudioFileInfo(
            path: path, formatName: formatName, codecName: codecName, format: writerFormat,
            sampleRate: sampleRate, channelCount: channelCount, frameCount: frames, bitDepth: bitDepth,
            bitRate: bitRate, primingFrameCount: layout.primingFrameCount,
            remainderFrameCount: layout.remainderFrameCount)
    }

    /// An MP4 whose sample table points past the end of the file, or whose edit list claims more
    /// than the table holds (found at open); nil otherwise. Other FFmpeg formats declare no length
    /// that could be checked without decoding.
    func damage() -> AudioFileDamage? { sampleTableDamage }

    /// Decodes the valid frames from `startFrame`, at most `limit` of them (nil = to the end).
    ///
    /// - Returns: the channels; fewer than `limit` frames when the stream ends early (the caller
    ///   decides whether that is truncation).
    /// - Throws: `.corruptData` for demuxing or decoding errors, `.tooLarge` when the result would
    ///   exceed `AudioFileReader.maximumSampleCount`, `.readFailed` for I/O errors.
    func read(startFrame: Int, limit: Int?) throws(AudioFileError) -> [[Float]] {
        let end = limit.map { startFrame + $0 } ?? layout.validFrameCount ?? Int.max
        return try decodeAll(startFrame: startFrame, endFrame: end, keep: true).channels
    }

    /// The decode loop. Frames are numbered after FFmpeg has dropped the priming; frames in
    /// `startFrame..<endFrame` are kept (when `keep`) and counted, the rest dropped.
    private func decodeAll(startFrame: Int, endFrame: Int, keep: Bool) throws(AudioFileError)
        -> (channels: [[Float]], frames: Int)
    {
        guard !hasDecoded else {
            throw .readFailed(path: path, reason: "internal error: an FFmpeg session decodes only once")
        }
        hasDecoded = true
        let wanted = endFrame == Int.max ? nil : max(0, endFrame - startFrame)
        if keep, let wanted,
            wanted.multipliedReportingOverflow(by: channelCount).partialValue
                > AudioFileReader.maximumSampleCount || wanted > AudioFileReader.maximumSampleCount
        {
            throw .tooLarge(path: path, frameCount: wanted, channelCount: channelCount)
        }
        var channels = [[Float]](repeating: [], count: keep ? channelCount : 0)
        // Never trust a header for more than ~4 M frames up front; grow as data decodes.
        for index in channels.indices { channels[index].reserveCapacity(min(wanted ?? 0, 1 << 22)) }

        // Frame numbers start negative when this reader drops the priming itself.
        var position = -manualSkipFrameCount
        var kept = 0
        var isDraining = false
        let total = layout.validFrameCount.map { " of \($0)" } ?? ""
        while position < endFrame {
            if !isDraining {
                if hasPendingPacket {
                    hasPendingPacket = false
                } else {
                    let hasPacket = try Self.readPacket(
                        input: input, into: decoder.packet, streamIndex: streamIndex, path: path, position: position)
                    isDraining = !hasPacket
                }
                FFmpegLibrary.clearLastMessage()
                let sent = avcodec_send_packet(decoder.codec, isDraining ? nil : decoder.packet)
                av_packet_unref(decoder.packet)
                if sent < 0, sent != FFmpegLibrary.endOfFile {
                    throw .corruptData(
                        path: path,
                        reason: "decoding failed near frame \(position)\(total): \(FFmpegLibrary.describe(sent))")
                }
            }
            // Drain every frame this packet produced.
            while position < endFrame {
                FFmpegLibrary.clearLastMessage()
                let received = avcodec_receive_frame(decoder.codec, decoder.frame)
                if received == FFmpegLibrary.again || received == FFmpegLibrary.endOfFile { break }
                if received < 0 {
                    throw .corruptData(
                        path: path,
                        reason: "decoding failed near frame \(position)\(total): \(FFmpegLibrary.describe(received))")
                }
                let count = Int(decoder.frame!.pointee.nb_samples)
                let keepFrom = max(position, startFrame)
                let keepTo = min(position + count, endFrame)
                if keepTo > keepFrom {
                    if keep {
                        try decoder.convert(
                            into: &channels, from: keepFrom - position, count: keepTo - keepFrom,
                            sampleRate: Int32(sampleRate), channelCount: channelCount, position: position, path: path)
                    }
                    kept += keepTo - keepFrom
                    if keep,
                        kept.multipliedReportingOverflow(by: channelCount).partialValue
                            > AudioFileReader.maximumSampleCount
                    {
                        throw .tooLarge(path: path, frameCount: kept, channelCount: channelCount)
                    }
                }
                position += count
                av_frame_unref(decoder.frame)
            }
            if isDraining { break }
        }
        return (channels, kept)
    }

    /// Reads the next packet of `streamIndex` into `packet`.
    ///
    /// - Returns: false at the end of the file.
    /// - Throws: `.corruptData` for a demuxing error, `.readFailed` for an I/O error.
    static func readPacket(
        input: FFmpegInput, into packet: UnsafeMutablePointer<AVPacket>?, streamIndex: Int32, path: String,
        position: Int
    ) throws(AudioFileError) -> Bool {
        while true {
            FFmpegLibrary.clearLastMessage()
            let status = av_read_frame(input.context, packet)
            if status == FFmpegLibrary.endOfFile { return false }
            if status < 0 {
                let text = FFmpegLibrary.describe(status)
                if status == FFmpegLibrary.invalidData {
                    throw .corruptData(path: path, reason: "demuxing failed near frame \(position): \(text)")
                }
                throw .readFailed(path: path, reason: "FFmpeg: \(text) near frame \(position)")
            }
            if packet!.pointee.stream_index == streamIndex { return true }
            av_packet_unref(packet)
        }
    }

    /// The `AV_PKT_DATA_SKIP_SAMPLES` count of a packet (frames the decoder drops from its start).
    private static func skipSamples(of packet: UnsafeMutablePointer<AVPacket>?) -> Int {
        var size = 0
        guard let data = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 4 else { return 0 }
        return Int(cffmpeg_read_le32(data))
    }

    /// `value` in `timeBase` units as frames at `rate`; nil when unknown or negative.
    private static func frames(_ value: Int64, timeBase: AVRational, rate: Int32) -> Int? {
        guard value != Int64.min, value >= 0, timeBase.num > 0, timeBase.den > 0 else { return nil }
        return Int(av_rescale_q(value, timeBase, AVRational(num: 1, den: rate)))
    }

    /// An MP4 track as its sample table describes it, without edit lists.
    private struct SampleTable {
        /// Sum of all packet durations, in frames (priming included).
        var totalFrames: Int
        var packetCount: Int
        /// Timestamp (frames from the first packet) of the first packet that does not fit in the
        /// file, if any.
        var firstMissingFrame: Int?
    }

    /// Opens the file a second time with `ignore_editlist` to read the sample table as written.
    private static func sampleTable(
        fd: Int32, fileSize: Int, input: FFmpegInput, streamIndex: Int32, path: String
    ) throws(AudioFileError) -> SampleTable? {
        let raw = try FFmpegInput(
            fd: fd, path: path, format: input.context?.pointee.iformat, options: ["ignore_editlist": "1"])
        guard let stream = raw.stream(at: streamIndex), let parameters = stream.pointee.codecpar else { return nil }
        let rate = parameters.pointee.sample_rate
        guard rate > 0, let total = frames(stream.pointee.duration, timeBase: stream.pointee.time_base, rate: rate)
        else { return nil }
        let entryCount = avformat_index_get_entries_count(stream)
        var missing: Int?
        for entryIndex in 0..<entryCount {
            guard let entry = avformat_index_get_entry(stream, entryIndex) else { break }
            if entry.pointee.pos + Int64(entry.pointee.size) > Int64(fileSize) {
                missing = frames(max(0, entry.pointee.timestamp), timeBase: stream.pointee.time_base, rate: rate)
                break
            }
        }
        return SampleTable(totalFrames: total, packetCount: Int(entryCount), firstMissingFrame: missing)
    }

    /// Applies the truncation policy to an MP4: packets past the end of the file, or an edit
    /// list (or iTunSMPB tag) claiming more frames than the sample table holds, are `.truncated`.
    private static func checkComplete(
        table: SampleTable, validFrames: Int, priming: Int, path: String
    ) throws(AudioFileError) {
        if let missing = table.firstMissingFrame {
            let available = min(validFrames, max(0, missing - priming))
            if available < validFrames {
                throw .truncated(path: path, expectedFrames: validFrames, availableFrames: available)
            }
        }
        let held = table.totalFrames - priming
        if validFrames > held {
            throw .truncated(path: path, expectedFrames: validFrames, availableFrames: max(0, held))
        }
    }

    /// The codec id of the first audio stream, for an error message.
    private static func bestAudioCodecID(_ context: UnsafeMutablePointer<AVFormatContext>) -> AVCodecID? {
        for index in 0..<Int(context.pointee.nb_streams) {
            if let parameters = context.pointee.streams[index]?.pointee.codecpar,
                parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO
            {
                return parameters.pointee.codec_id
            }
        }
        return nil
    }

    /// "ALAC (Apple Lossless Audio Codec)"-style name of a codec.
    private static func codecLongName(_ id: AVCodecID) -> String {
        guard let descriptor = avcodec_descriptor_get(id) else { return "codec \(id.rawValue)" }
        let name = String(cString: descriptor.pointee.name).uppercased()
        guard let long = descriptor.pointee.long_name.map({ String(cString: $0) }) else { return name }
        return long.uppercased().hasPrefix(name) ? long : "\(name) (\(long))"
    }

    /// `AudioFileInfo.codecName`: "AAC LC", "HE-AAC", "ALAC (Apple Lossless Audio Codec)", …
    private static func codecName(_ parameters: AVCodecParameters) -> String {
        if parameters.codec_id == AV_CODEC_ID_AAC,
            let profile = avcodec_profile_name(parameters.codec_id, parameters.profile)
        {
            let text = String(cString: profile)
            return text.hasPrefix("HE-") ? text : "AAC \(text)"
        }
        return codecLongName(parameters.codec_id)
    }

    /// Container name for files outside the writer's formats: "MPEG-4", "QuickTime" or FFmpeg's
    /// long demuxer name ("Matroska / WebM", "ASF (Advanced / Active Streaming Format)", …).
    private static func containerName(_ input: FFmpegInput) -> String {
        if input.isMPEG4 {
            return input.metadata("major_brand")?.hasPrefix("qt") == true ? "QuickTime" : "MPEG-4"
        }
        if let format = input.context?.pointee.iformat, let long = format.pointee.long_name {
            return String(cString: long)
        }
        return input.demuxerName
    }
}

/// Owned decoder resources: codec context, packet, frame and the sample-format converter.
final class FFmpegDecoder {
    private(set) var codec: UnsafeMutablePointer<AVCodecContext>?
    private(set) var packet: UnsafeMutablePointer<AVPacket>?
    private(set) var frame: UnsafeMutablePointer<AVFrame>?
    private var converter: OpaquePointer?
    /// The input format the converter was set up for.
    private var converterInput: (format: Int32, channels: Int32, rate: Int32)?
    /// Planar float scratch the converter writes into, `scratchCapacity` frames per channel.
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchCapacity = 0

    private let stream: UnsafeMutablePointer<AVStream>
    private let decoder: UnsafePointer<AVCodec>
    private let skipsPrimingManually: Bool

    init(
        stream: UnsafeMutablePointer<AVStream>, codec decoder: UnsafePointer<AVCodec>, skipsPrimingManually: Bool,
        path: String
    ) throws(AudioFileError) {
        self.stream = stream
        self.decoder = decoder
        self.skipsPrimingManually = skipsPrimingManually
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard packet != nil, frame != nil else {
            throw .readFailed(path: path, reason: "FFmpeg could not allocate a decoder")
        }
        try openCodec(path: path)
    }

    /// Replaces the codec context with a fresh one, as a seek needs: `avcodec_flush_buffers`
    /// clears AAC's overlap but not the previous window shape or the noise generator, so a flushed
    /// decoder would decode the first packet differently from a new one.
    func reopenCodec(path: String) throws(AudioFileError) {
        avcodec_free_context(&codec)
        try openCodec(path: path)
    }

    /// Allocates and opens the codec context for the stream.
    private func openCodec(path: String) throws(AudioFileError) {
        codec = avcodec_alloc_context3(decoder)
        guard let codec else {
            throw .readFailed(path: path, reason: "FFmpeg could not allocate a decoder")
        }
        FFmpegLibrary.clearLastMessage()
        var status = avcodec_parameters_to_context(codec, stream.pointee.codecpar)
        if status >= 0 {
            codec.pointee.pkt_timebase = stream.pointee.time_base
            codec.pointee.thread_count = 1
            if skipsPrimingManually { codec.pointee.flags2 |= AV_CODEC_FLAG2_SKIP_MANUAL }
            status = avcodec_open2(codec, decoder, nil)
        }
        if status < 0 {
            throw .unsupportedFormat(
                path: path,
                reason: "FFmpeg cannot open its \(String(cString: decoder.pointee.name)) decoder for this "
                    + "stream: \(FFmpegLibrary.describe(status))")
        }
    }

    deinit {
        avcodec_free_context(&codec)
        av_packet_free(&packet)
        av_frame_free(&frame)
        swr_free(&converter)
        scratch?.deallocate()
    }

    /// Converts the current frame to planar float with libswresample and appends `count` frames
    /// from `offset` to `channels`.
    ///
    /// - Throws: as `convertFrame`.
    func convert(
        into channels: inout [[Float]], from offset: Int, count: Int, sampleRate: Int32, channelCount: Int,
        position: Int, path: String
    ) throws(AudioFileError) {
        let converted = try convertFrame(
            sampleRate: sampleRate, channelCount: channelCount, position: position, path: path)
        guard let scratch, converted >= offset + count else {
            throw .corruptData(
                path: path,
                reason: "converting decoded samples failed near frame \(position): \(converted) frames converted")
        }
        for channel in 0..<channelCount {
            channels[channel].append(
                contentsOf: UnsafeBufferPointer(start: scratch + channel * scratchCapacity + offset, count: count))
        }
    }

    /// Converts the current frame to planar float in the scratch planes (`copyInterleaved` reads
    /// them); returns the frames converted.
    ///
    /// - Throws: `.corruptData` when the frame's rate or channel count differs from the stream's
    ///   (`sampleRate`, `channelCount`), or the converter fails.
    func convertFrame(sampleRate: Int32, channelCount: Int, position: Int, path: String) throws(AudioFileError) -> Int {
        guard let frame else { return 0 }
        let frameChannels = frame.pointee.ch_layout.nb_channels
        guard frame.pointee.sample_rate == sampleRate, Int(frameChannels) == channelCount else {
            throw .corruptData(
                path: path,
                reason: "the stream changes from \(sampleRate) Hz, \(channelCount) channels to "
                    + "\(frame.pointee.sample_rate) Hz, \(frameChannels) channels at frame \(position)")
        }
        let frames = Int(frame.pointee.nb_samples)
        try prepareConverter(for: frame, path: path)
        if scratchCapacity < frames {
            scratch?.deallocate()
            scratchCapacity = max(frames, 4096)
            scratch = .allocate(capacity: scratchCapacity * channelCount)
        }
        guard let scratch else { return 0 }
        var planes: [UnsafeMutablePointer<UInt8>?] = (0..<channelCount).map {
            UnsafeMutableRawPointer(scratch + $0 * scratchCapacity).assumingMemoryBound(to: UInt8.self)
        }
        let converted = planes.withUnsafeMutableBufferPointer { outputs in
            frame.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: channelCount) {
                swr_convert(converter, outputs.baseAddress, Int32(scratchCapacity), $0, Int32(frames))
            }
        }
        guard converted >= 0 else {
            throw .corruptData(
                path: path,
                reason: "converting decoded samples failed near frame \(position): \(FFmpegLibrary.describe(converted))"
            )
        }
        return Int(converted)
    }

    /// Interleaves `count` frames from `offset` of the scratch planes into `output`.
    func copyInterleaved(from offset: Int, count: Int, channelCount: Int, into output: UnsafeMutablePointer<Float>) {
        guard let scratch else { return }
        for channel in 0..<channelCount {
            let plane = scratch + channel * scratchCapacity + offset
            var index = channel
            for frame in 0..<count {
                output[index] = plane[frame]
                index += channelCount
            }
        }
    }

    /// Bytes of the planar scratch.
    var scratchBytes: Int {
        scratchCapacity * MemoryLayout<Float>.size * Int(codec?.pointee.ch_layout.nb_channels ?? 0)
    }

    /// (Re)creates the converter when the decoded sample format changes (at the first frame).
    private func prepareConverter(for frame: UnsafeMutablePointer<AVFrame>, path: String) throws(AudioFileError) {
        let key = (frame.pointee.format, frame.pointee.ch_layout.nb_channels, frame.pointee.sample_rate)
        if let current = converterInput, current == key, converter != nil { return }
        swr_free(&converter)
        FFmpegLibrary.clearLastMessage()
        // Shallow copies: swr_alloc_set_opts2 takes non-const pointers but copies the layouts.
        var outputLayout = frame.pointee.ch_layout
        var inputLayout = frame.pointee.ch_layout
        var status = swr_alloc_set_opts2(
            &converter, &outputLayout, AV_SAMPLE_FMT_FLTP, frame.pointee.sample_rate,
            &inputLayout, AVSampleFormat(rawValue: frame.pointee.format), frame.pointee.sample_rate, 0, nil)
        if status >= 0 { status = swr_init(converter) }
        guard status >= 0 else {
            throw .unsupportedFormat(
                path: path,
                reason: "libswresample cannot convert the decoded samples: \(FFmpegLibrary.describe(status))")
        }
        converterInput = key
    }
}
