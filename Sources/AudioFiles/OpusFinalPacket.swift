// Control side. Keeps the last milliseconds of an Opus file libsndfile writes.
import CSndFile

/// libsndfile 1.2.0 encodes Opus in 20 ms packets. At the end it pushes the encoder's lookahead out
/// (312 samples at 48 kHz) with silence, and shortens that last packet to 10, 5 or 2.5 ms when the
/// audio left over in the packet buffer plus the lookahead fits. libopus 1.3.1's VBR gives such a short
/// packet, whose new samples are silence, only a few bytes (3–9), which cannot carry the real audio of
/// its lookahead: the last 2–6 ms of the file decode as a fade (a 0.5 sine read back at 0.008). That
/// happens when the frames written leave 0 … 168 samples (at 48 kHz) in the buffer, or more than 648
/// (the short packet then follows a full one): every length a multiple of 20 ms, a whole second
/// included.
///
/// The writer avoids it: before closing, it writes silence until half a packet is left over, so the
/// last packet is a full 20 ms one (which keeps its bytes), and afterwards takes the padding off the
/// last page's granule position (`OggSerialNumber.fix(trimmingEndBy:)`). RFC 7845 lets a last page end
/// before its packets' audio; decoders drop the rest, so the file reads back at the length written.
enum OpusFinalPacket {
    /// Silent frames to write before closing after `framesWritten` frames at `sampleRate` (one of
    /// Opus's rates), and the amount to take off the last granule position, in 48 kHz samples.
    static func padding(framesWritten: Int, sampleRate: Int) -> (frames: Int, granuleTrim: Int64) {
        guard framesWritten > 0, sampleRate > 0, 48_000 % sampleRate == 0 else { return (0, 0) }
        let factor = 48_000 / sampleRate
        let packet = sampleRate / 50
        let left = framesWritten % packet
        // In 48 kHz samples: up to 168 left (168 + the 312 lookahead ≤ 480) or above 648 (the lookahead
        // spills into a second, short packet) ends in a short packet.
        guard left * factor <= 168 || left * factor > 648 else { return (0, 0) }
        let frames = (packet / 2 - left + packet) % packet
        return (frames, Int64(frames * factor))
    }

    /// Writes `frames` silent frames of `channelCount` channels; the number written.
    static func writeSilence(_ handle: OpaquePointer, frames: Int, channelCount: Int) -> Int {
        guard frames > 0 else { return 0 }
        let silence = [Float](repeating: 0, count: frames * channelCount)
        return Int(silence.withUnsafeBufferPointer { sf_writef_float(handle, $0.baseAddress, sf_count_t(frames)) })
    }
}
