// Control side. Works out how many of a compressed stream's decoded frames are real audio: the
// priming (encoder delay) at the start, the valid frames, and the remainder (padding) at the end.

/// Gapless layout of a decoded stream: `primingFrameCount + validFrameCount + remainderFrameCount`
/// frames come out of the decoder, and only the valid ones are audio (Apple Technical Note TN2258,
/// "AAC Audio - Encoder Delay and Synchronization"; QuickTime File Format, Appendix G, "Audio
/// Priming - Handling Encoder Delay in AAC"; ISO/IEC 14496-12 §8.6.6, edit lists).
struct GaplessLayout: Equatable {
    var primingFrameCount: Int
    /// Nil when the container does not say; the reader then keeps every decoded frame.
    var validFrameCount: Int?
    var remainderFrameCount: Int

    /// The fields of an iTunes `iTunSMPB` tag: " 00000000 00000840 000001CA 00000000000CF4B6 …"
    /// is (reserved, priming 0x840 = 2112, remainder 0x1CA = 458, valid frames 0xCF4B6 = 849,078).
    struct ITunesSMPB: Equatable {
        var primingFrameCount: Int
        var remainderFrameCount: Int
        var validFrameCount: Int

        /// Parses the tag's text; nil when it has fewer than four hexadecimal fields.
        init?(_ text: String) {
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Int($0, radix: 16) }
            guard fields.count >= 4, let priming = fields[1], let remainder = fields[2], let valid = fields[3],
                priming >= 0, remainder >= 0, valid >= 0
            else { return nil }
            primingFrameCount = priming
            remainderFrameCount = remainder
            validFrameCount = valid
        }
    }

    /// What Debian's FFmpeg 5.1 tells about an MP4 audio track, and how it is combined.
    ///
    /// FFmpeg's mov demuxer turns the edit list's start (or, without an edit list, the iTunSMPB
    /// priming) into `AV_PKT_DATA_SKIP_SAMPLES` on the first packet, and the decoder drops those
    /// frames itself: `primingFrameCount`. The end is not trimmed by FFmpeg 5.1, so the valid
    /// length is taken, in this order, from:
    /// 1. an iTunSMPB tag's valid-frame count (iTunes, afconvert);
    /// 2. the edit list's duration (`editedFrames`), except that FFmpeg's own muxer writes it in
    ///    a 1 kHz movie timescale by default, rounding it down to a millisecond: for files whose
    ///    `encoder` tag says libavformat ("Lavf…"), the sample table's exact total
    ///    (`rawFrames`, the sum of packet durations, whose last entry that encoder trims) wins
    ///    when the two differ by less than a millisecond;
    /// 3. the sample table's total minus the priming, when there is no edit list.
    ///
    /// - Parameters:
    ///   - primingFrameCount: the skip-samples value of the stream's first packet (0 if none).
    ///   - editedFrames: the track's duration with edit lists applied, in frames.
    ///   - rawFrames: the sample table's total duration (edit lists ignored), in frames.
    ///   - packetCount: packets in the sample table.
    ///   - frameSize: frames per packet for fixed-size codecs (AAC: 1024), 0 for variable.
    ///   - smpb: the iTunSMPB tag, if any.
    ///   - isWrittenByLibavformat: the file's `encoder` tag starts with "Lavf".
    ///   - sampleRate: in Hz.
    static func mpeg4(
        primingFrameCount priming: Int, editedFrames: Int?, rawFrames: Int?, packetCount: Int, frameSize: Int,
        smpb: ITunesSMPB?, isWrittenByLibavformat: Bool, sampleRate: Double
    ) -> GaplessLayout {
        var valid: Int?
        if let smpb, smpb.validFrameCount > 0 {
            valid = smpb.validFrameCount
        } else if let editedFrames, let rawFrames {
            let fromTable = rawFrames - priming
            let millisecond = Int((sampleRate / 1000).rounded(.up))
            let isRoundedEdit =
                isWrittenByLibavformat && fromTable >= editedFrames && fromTable - editedFrames < millisecond
            valid = isRoundedEdit ? fromTable : editedFrames
        } else if let rawFrames {
            valid = rawFrames - priming
        } else {
            valid = editedFrames
        }
        let validFrames = max(0, valid ?? 0)

        // Frames the decoder produces in all: whole packets for fixed-size codecs.
        let decodedFrames = frameSize > 0 && packetCount > 0 ? packetCount * frameSize : rawFrames
        let remainder: Int
        if let smpb, smpb.validFrameCount > 0 {
            remainder = smpb.remainderFrameCount
        } else {
            remainder = decodedFrames.map { max(0, $0 - priming - validFrames) } ?? 0
        }
        return GaplessLayout(
            primingFrameCount: priming, validFrameCount: valid == nil ? nil : validFrames,
            remainderFrameCount: remainder)
    }
}
