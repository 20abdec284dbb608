// Disk thread (opened on the control side). Incremental FFmpeg decoding for streamed files:
// interleaved frames a few at a time, gapless like `read`, and exact seeks in MP4 tracks.

import CFFmpeg

/// Where an incremental FFmpeg decode stands.
struct FFmpegStreamCursor {
    /// Valid-frame index of the next frame in the decoded scratch (negative inside the priming).
    var position = 0
    /// Frames of the current decoded frame not yet delivered, from `pendingOffset` in the scratch.
    var pendingCount = 0
    var pendingOffset = 0
    /// Frames before this index are decoded and dropped (the priming, and a seek's pre-roll).
    var discardBefore = 0
    var isDraining = false
    var isAtEnd = false
    /// Set by the first `readInterleaved`: the position has been established.
    var hasStarted = false
}

extension FFmpegReader: StreamingSession {
    /// Exact seeks need frame-exact timestamps: MP4 tracks in 1 / sample-rate units.
    var seeksExactly: Bool { validZeroTimestamp != nil }

    var bufferBytes: Int { decoder.scratchBytes }

    /// Positions the next `readInterleaved` at valid frame `frame`.
    ///
    /// Seeks the demuxer to the packet that holds `frame − seekPrerollFrameCount` (at least the
    /// first packet), starts a fresh decoder and decodes from there, dropping everything before
    /// `frame`. From the first packet this is exactly a decode from the start (loops are
    /// seamless and bit-identical to the preloaded decode); elsewhere the pre-roll rebuilds AAC's
    /// overlap state, so the frames from `frame` on are those a decode from the start gives
    /// (bit-exact for ALAC; for AAC LC too unless the encoder used perceptual noise substitution,
    /// whose noise generator restarts with the decoder).
    ///
    /// - Throws: `.readFailed` when the file does not seek exactly (`seeksExactly` is false) or
    ///   FFmpeg cannot seek; `.corruptData` / `.readFailed` for demuxing errors.
    func seek(toFrame frame: Int) throws(AudioFileError) {
        guard let zero = validZeroTimestamp, let context = input.context else {
            throw .readFailed(path: path, reason: "FFmpeg cannot seek exactly in this file")
        }
        let target = Int64(frame - seekPrerollFrameCount) + zero
        let first = zero - Int64(layout.primingFrameCount)
        av_packet_unref(decoder.packet)
        hasPendingPacket = false
        try decoder.reopenCodec(path: path)
        cursor = FFmpegStreamCursor()
        FFmpegLibrary.clearLastMessage()
        let status = av_seek_frame(context, streamIndex, max(first, target), AVSEEK_FLAG_BACKWARD)
        if status < 0 {
            throw .readFailed(
                path: path, reason: "FFmpeg cannot seek to frame \(frame): \(FFmpegLibrary.describe(status))")
        }
        hasPendingPacket = try Self.readPacket(
            input: input, into: decoder.packet, streamIndex: streamIndex, path: path, position: frame)
        let timestamp = decoder.packet!.pointee.pts
        guard hasPendingPacket, timestamp != Int64.min else {
            cursor.isAtEnd = true
            cursor.hasStarted = true
            return
        }
        cursor.position = Int(timestamp - zero)
        cursor.discardBefore = frame
        cursor.hasStarted = true
        // The decode must start early enough for the pre-roll (or at the first packet).
        if cursor.position > max(frame - seekPrerollFrameCount, -layout.primingFrameCount) {
            throw .readFailed(path: path, reason: "FFmpeg seeked past frame \(frame) (to \(cursor.position))")
        }
    }

    /// Decodes up to `frames` interleaved valid frames into `buffer`; 0 at the end.
    ///
    /// - Throws: `.corruptData` for decoding errors, `.readFailed` for I/O errors, `.truncated`
    ///   when the packets end before the container's valid length (a file cut while it streams).
    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        if !cursor.hasStarted {
            // A fresh session: the decoder delivers the priming, which counts below frame 0.
            cursor.position = -layout.primingFrameCount
            cursor.hasStarted = true
        }
        let end = layout.validFrameCount ?? Int.max
        var written = 0
        while written < frames {
            if cursor.pendingCount > 0 {
                let dropped = min(cursor.pendingCount, max(0, max(0, cursor.discardBefore) - cursor.position))
                consume(dropped)
                if cursor.pendingCount == 0 { continue }
                guard cursor.position < end else {
                    cursor.pendingCount = 0
                    cursor.isAtEnd = true
                    break
                }
                let count = min(cursor.pendingCount, frames - written, end - cursor.position)
                decoder.copyInterleaved(
                    from: cursor.pendingOffset, count: count, channelCount: channelCount,
                    into: buffer + written * channelCount)
                consume(count)
                written += count
                continue
            }
            if cursor.isAtEnd {
                // The container promised more: the file was cut (or is being rewritten) under us.
                if let valid = layout.validFrameCount, cursor.position < valid {
                    throw .truncated(path: path, expectedFrames: valid, availableFrames: max(0, cursor.position))
                }
                break
            }
            try decodeNextFrame()
        }
        return written
    }

    /// Delivers `count` frames of the pending decoded frame.
    private func consume(_ count: Int) {
        cursor.pendingCount -= count
        cursor.pendingOffset += count
        cursor.position += count
    }

    /// Receives the next decoded frame into the scratch (feeding packets as the decoder asks), or
    /// marks the end.
    private func decodeNextFrame() throws(AudioFileError) {
        let total = layout.validFrameCount.map { " of \($0)" } ?? ""
        while true {
            FFmpegLibrary.clearLastMessage()
            let received = avcodec_receive_frame(decoder.codec, decoder.frame)
            if received >= 0 {
                defer { av_frame_unref(decoder.frame) }
                let count = try decoder.convertFrame(
                    sampleRate: Int32(sampleRate), channelCount: channelCount, position: cursor.position, path: path)
                cursor.pendingCount = count
                cursor.pendingOffset = 0
                return
            }
            if received == FFmpegLibrary.endOfFile {
                cursor.isAtEnd = true
                return
            }
            if received != FFmpegLibrary.again {
                throw .corruptData(
                    path: path,
                    reason: "decoding failed near frame \(cursor.position)\(total): \(FFmpegLibrary.describe(received))"
                )
            }
            if cursor.isDraining {
                cursor.isAtEnd = true
                return
            }
            if hasPendingPacket {
                hasPendingPacket = false
            } else {
                let hasPacket = try Self.readPacket(
                    input: input, into: decoder.packet, streamIndex: streamIndex, path: path, position: cursor.position)
                cursor.isDraining = !hasPacket
            }
            FFmpegLibrary.clearLastMessage()
            let sent = avcodec_send_packet(decoder.codec, cursor.isDraining ? nil : decoder.packet)
            av_packet_unref(decoder.packet)
            if sent < 0, sent != FFmpegLibrary.endOfFile {
                throw .corruptData(
                    path: path,
                    reason: "decoding failed near frame \(cursor.position)\(total): \(FFmpegLibrary.describe(sent))")
            }
        }
    }
}
