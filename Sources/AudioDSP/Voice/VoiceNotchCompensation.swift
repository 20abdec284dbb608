// Control side: init. Render side: process (no allocation, no locks). Plain value state.

/// Gives the near-end talker back the low end that SpeexDSP's DC notch takes from the microphone.
///
/// The MDF high-passes its microphone input with `N(z) = r(1 − z⁻¹)² / (1 − 2r z⁻¹ + d z⁻²)`,
/// d = r² + 0.7(1 − r)² (mdf.c, float build; r = 0.992 at 24 kHz and above, 0.982 from 12 kHz, 0.9
/// below). At 48 kHz that is −2.5 dB at 100 Hz and −0.8 dB at 150 Hz: a male talker's fundamental loses
/// about 0.5 dB of its level (`dt_near_gain_db`) before anything else touches it. This filter,
/// `C(z) = N_q(z) / N(z)`, divides the notch out and puts the same notch back at radius q,
/// 1 − q = 2π·30 Hz/fs: N·C = N_q, whose corner is at 30 Hz at every rate (−0.3 dB at 100 Hz, −2 dB at
/// 50 Hz), so DC and rumble still go (mdf.c's corner is higher at every rate it uses: 127 Hz at 8 kHz,
/// 46 Hz at 16 kHz, 61 Hz at 48 kHz).
///
/// It is applied only while the near end talks, crossfaded across a frame: the echo the notch removed
/// at the low end is not cancelled by the MDF (it never saw it), so restoring it in far-end single talk
/// would let that low-frequency echo back through. The filter runs on every frame, so switching is a
/// crossfade between two continuous signals. Cost: a biquad per sample and channel.
public struct VoiceNotchCompensation {
    public let frameLength: Int
    /// The corner of `N·C`, in hertz: 1 − q = 2π·corner/fs.
    public static let cornerHertz = 30.0
    @usableFromInline let b0: Float
    @usableFromInline let b1: Float
    @usableFromInline let b2: Float
    @usableFromInline let a1: Float
    @usableFromInline let a2: Float
    /// Per channel: two transposed direct-form II state values.
    @usableFromInline var state: (Float, Float, Float, Float) = (0, 0, 0, 0)
    /// Weight of the compensated signal at the end of the latest frame (0 … 1).
    @usableFromInline var weight: Float = 0

    /// The notch radius for `sampleRate`, as mdf.c chooses it.
    public static func notchRadius(sampleRate: Double) -> Float {
        sampleRate < 12_000 ? 0.9 : sampleRate < 24_000 ? 0.982 : 0.992
    }

    /// The notch's z⁻² pole coefficient d = r² + 0.7(1 − r)² for radius `r`, as mdf.c computes it.
    @inlinable
    public static func notchPoleTerm(radius r: Float) -> Float { r * r + 0.7 * (1 - r) * (1 - r) }

    public init(frameLength: Int, sampleRate: Double) {
        self.frameLength = frameLength
        let r = Self.notchRadius(sampleRate: sampleRate)
        let d = Self.notchPoleTerm(radius: r)
        // The same notch, moved down to `cornerHertz` (never up, should a rate ever put it lower).
        let q = max(r, Float(1 - 2 * EffectMath.pi * Self.cornerHertz / sampleRate))
        let e = Self.notchPoleTerm(radius: q)
        b0 = q / r
        b1 = -2 * q
        b2 = d * q / r
        a1 = -2 * q
        a2 = e
    }

    /// Filters one frame of up to two channels in place, moving the compensated share linearly from the
    /// previous frame's weight to 1 (`nearEndActive`) or 0.
    @inlinable
    public mutating func process(
        _ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, nearEndActive: Bool
    ) {
        let f = frameLength
        let start = weight
        let target: Float = nearEndActive ? 1 : 0
        let step = (target - start) / Float(f)
        weight = target
        for c in 0..<channelCount {
            var z1 = c == 0 ? state.0 : state.2
            var z2 = c == 0 ? state.1 : state.3
            let y = channels[c]
            for n in 0..<f {
                let x = y[n]
                let v = b0 * x + z1
                z1 = b1 * x - a1 * v + z2
                z2 = b2 * x - a2 * v
                y[n] = x + (start + step * Float(n + 1)) * (v - x)
            }
            // Flush what would decay into denormals in silence.
            z1 = z1 + 1e-20 - 1e-20
            z2 = z2 + 1e-20 - 1e-20
            if c == 0 {
                state.0 = z1
                state.1 = z2
            } else {
                state.2 = z1
                state.3 = z2
            }
        }
    }
}
