// Render side (designs and filtering) and control side (analytic response). Second-order IIR filter
// sections designed with Robert Bristow-Johnson's "Cookbook formulae for audio EQ biquad filter
// coefficients" (W3C Audio EQ Cookbook note, 2021 edition).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The 11 AVAudioUnitEQ filter types, numbered as `AVAudioUnitEQFilterType` (0…10).
public enum EQFilterType: Int, Sendable, BitwiseCopyable, CaseIterable {
    case parametric = 0
    case lowPass = 1
    case highPass = 2
    case resonantLowPass = 3
    case resonantHighPass = 4
    case bandPass = 5
    case bandStop = 6
    case lowShelf = 7
    case highShelf = 8
    case resonantLowShelf = 9
    case resonantHighShelf = 10

    /// The camelCase name used in patches and OSC.
    public var name: String {
        switch self {
        case .parametric: return "parametric"
        case .lowPass: return "lowPass"
        case .highPass: return "highPass"
        case .resonantLowPass: return "resonantLowPass"
        case .resonantHighPass: return "resonantHighPass"
        case .bandPass: return "bandPass"
        case .bandStop: return "bandStop"
        case .lowShelf: return "lowShelf"
        case .highShelf: return "highShelf"
        case .resonantLowShelf: return "resonantLowShelf"
        case .resonantHighShelf: return "resonantHighShelf"
        }
    }

    /// All names in index order.
    public static var allNames: [String] { allCases.map(\.name) }

    /// The type called `name`, or nil.
    public init?(name: String) {
        guard let match = EQFilterType.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

/// Normalized biquad coefficients (a0 = 1): H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²).
public struct BiquadCoefficients: Sendable, BitwiseCopyable, Equatable {
    public var b0: Double
    public var b1: Double
    public var b2: Double
    public var a1: Double
    public var a2: Double

    @inlinable
    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    /// H(z) = 1.
    @inlinable public static var identity: BiquadCoefficients { .init(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0) }

    /// Divides by a0 (the cookbook gives un-normalized coefficients).
    @inlinable
    static func normalized(_ b0: Double, _ b1: Double, _ b2: Double, _ a0: Double, _ a1: Double, _ a2: Double)
        -> BiquadCoefficients
    {
        let inv = 1 / a0
        return BiquadCoefficients(b0: b0 * inv, b1: b1 * inv, b2: b2 * inv, a1: a1 * inv, a2: a2 * inv)
    }

    /// Highest design frequency as a fraction of the sample rate. At exactly Nyquist the cookbook
    /// designs degenerate (poles or zeros on the unit circle at z = −1), so higher requests are designed
    /// here. 0.49 · 48 kHz = 23.52 kHz.
    @inlinable public static var maximumDesignRatio: Double { 0.49 }

    /// Lowest design frequency in Hz (below the EQ's 20 Hz minimum, for other users).
    @inlinable public static var minimumDesignFrequency: Double { 1 }

    /// ω₀ = 2π·f/fs with f clamped to the design range.
    @inlinable
    static func omega(_ frequency: Double, _ sampleRate: Double) -> Double {
        let f = EffectMath.clamp(frequency, minimumDesignFrequency, maximumDesignRatio * sampleRate)
        return 2 * EffectMath.pi * f / sampleRate
    }

    /// The cookbook's α for a bandwidth in octaves, with the bilinear-transform correction:
    /// α = sin ω₀ · sinh(ln2/2 · BW · ω₀/sin ω₀). Equivalent to Q = 1 / (2 sinh(ln2/2 · BW · ω₀/sin ω₀)).
    /// The sinh argument is capped at 16 (only reached near Nyquist with wide bands), which keeps the
    /// coefficients finite.
    @inlinable
    public static func alpha(omega w0: Double, bandwidth: Double) -> Double {
        let s = EffectMath.sin(w0)
        let x = min(0.346_573_590_279_972_654_7 * bandwidth * w0 / s, 16)  // ln2/2 = 0.3465…
        return s * EffectMath.sinh(x)
    }

    /// The Q an octave bandwidth maps to at ω₀ (for documentation and tests): 1/(2·sinh(…)).
    public static func quality(bandwidth: Double, frequency: Double, sampleRate: Double) -> Double {
        let w0 = omega(frequency, sampleRate)
        return EffectMath.sin(w0) / (2 * alpha(omega: w0, bandwidth: bandwidth))
    }

    /// Cookbook LPF. `q` > 0; Q = 1/√2 is second-order Butterworth (−3.01 dB at `frequency`).
    @inlinable
    public static func lowPass(frequency: Double, q: Double, sampleRate: Double) -> BiquadCoefficients {
        let w0 = omega(frequency, sampleRate)
        let (s, c) = EffectMath.sinCos(w0)
        return lowPass(cosine: c, alpha: s / (2 * q))
    }

    @inlinable
    static func lowPass(cosine c: Double, alpha: Double) -> BiquadCoefficients {
        normalized((1 - c) / 2, 1 - c, (1 - c) / 2, 1 + alpha, -2 * c, 1 - alpha)
    }

    /// Cookbook HPF. `q` > 0; Q = 1/√2 is Butterworth.
    @inlinable
    public static func highPass(frequency: Double, q: Double, sampleRate: Double) -> BiquadCoefficients {
        let w0 = omega(frequency, sampleRate)
        let (s, c) = EffectMath.sinCos(w0)
        return highPass(cosine: c, alpha: s / (2 * q))
    }

    @inlinable
    static func highPass(cosine c: Double, alpha: Double) -> BiquadCoefficients {
        normalized((1 + c) / 2, -(1 + c), (1 + c) / 2, 1 + alpha, -2 * c, 1 - alpha)
    }

    /// Designs one AVAudioUnitEQ band. Ranges (clamped): `frequency` 1 Hz … 0.49·fs (the EQ's user range
    /// is 20 Hz … fs/2), `bandwidth` 0.05 … 5 octaves, `gainDecibels` −96 … 24 dB. Mapping to the
    /// cookbook (ω₀ = 2πf/fs, A = 10^(gain/40), α from `alpha(omega:bandwidth:)`):
    ///
    /// - parametric: peakingEQ, BW = octaves between the half-gain (dB) points; peak gain at f.
    /// - lowPass / highPass: LPF / HPF with Q = 1/√2 (Butterworth, −3.01 dB at f); bandwidth, gain unused.
    /// - resonantLowPass / resonantHighPass: LPF / HPF with α from the bandwidth (Q = 1/(2 sinh …));
    ///   narrower bands resonate more (|H(f)| = Q). Gain unused.
    /// - bandPass: BPF with constant 0 dB peak; −3 dB edges BW octaves apart. Gain unused.
    /// - bandStop: notch (zero at f); −3 dB edges BW octaves apart. Gain unused.
    /// - lowShelf / highShelf: shelves with slope S = 1 (the steepest without overshoot,
    ///   α = sin ω₀/√2); the plateau is `gain`, the midpoint gain/2 dB at f. Bandwidth unused.
    /// - resonantLowShelf / resonantHighShelf: the same shelves with α from the bandwidth; below ≈1.9
    ///   octaves (Q > 1/√2) the corner overshoots, giving a resonant bump and dip.
    @inlinable
    public static func eqBand(
        type: EQFilterType, frequency: Double, bandwidth: Double, gainDecibels: Double, sampleRate: Double
    ) -> BiquadCoefficients {
        let w0 = omega(frequency, sampleRate)
        let (s, c) = EffectMath.sinCos(w0)
        let bw = EffectMath.clamp(bandwidth, 0.05, 5)
        let gain = EffectMath.clamp(gainDecibels, -96, 24)
        switch type {
        case .parametric:
            let a = EffectMath.decibelsToGain(gain / 2)
            let alpha = alpha(omega: w0, bandwidth: bw)
            return normalized(1 + alpha * a, -2 * c, 1 - alpha * a, 1 + alpha / a, -2 * c, 1 - alpha / a)
        case .lowPass:
            return lowPass(cosine: c, alpha: s * 0.707_106_781_186_547_524_4)  // s/(2Q), Q = 1/√2
        case .highPass:
            return highPass(cosine: c, alpha: s * 0.707_106_781_186_547_524_4)
        case .resonantLowPass:
            return lowPass(cosine: c, alpha: alpha(omega: w0, bandwidth: bw))
        case .resonantHighPass:
            return highPass(cosine: c, alpha: alpha(omega: w0, bandwidth: bw))
        case .bandPass:
            let alpha = alpha(omega: w0, bandwidth: bw)
            return normalized(alpha, 0, -alpha, 1 + alpha, -2 * c, 1 - alpha)
        case .bandStop:
            let alpha = alpha(omega: w0, bandwidth: bw)
            return normalized(1, -2 * c, 1, 1 + alpha, -2 * c, 1 - alpha)
        case .lowShelf:
            return lowShelf(a: EffectMath.decibelsToGain(gain / 2), cosine: c, alpha: s * 0.707_106_781_186_547_524_4)
        case .highShelf:
            return highShelf(a: EffectMath.decibelsToGain(gain / 2), cosine: c, alpha: s * 0.707_106_781_186_547_524_4)
        case .resonantLowShelf:
            return lowShelf(a: EffectMath.decibelsToGain(gain / 2), cosine: c, alpha: alpha(omega: w0, bandwidth: bw))
        case .resonantHighShelf:
            return highShelf(a: EffectMath.decibelsToGain(gain / 2), cosine: c, alpha: alpha(omega: w0, bandwidth: bw))
        }
    }

    /// Cookbook lowShelf; `a` = 10^(gain/40). (With S = 1, α = sin ω₀ / √2.)
    @inlinable
    static func lowShelf(a: Double, cosine c: Double, alpha: Double) -> BiquadCoefficients {
        let k = 2 * EffectMath.squareRoot(a) * alpha
        return normalized(
            a * ((a + 1) - (a - 1) * c + k), 2 * a * ((a - 1) - (a + 1) * c), a * ((a + 1) - (a - 1) * c - k),
            (a + 1) + (a - 1) * c + k, -2 * ((a - 1) + (a + 1) * c), (a + 1) + (a - 1) * c - k)
    }

    /// Cookbook highShelf; `a` = 10^(gain/40).
    @inlinable
    static func highShelf(a: Double, cosine c: Double, alpha: Double) -> BiquadCoefficients {
        let k = 2 * EffectMath.squareRoot(a) * alpha
        return normalized(
            a * ((a + 1) + (a - 1) * c + k), -2 * a * ((a - 1) + (a + 1) * c), a * ((a + 1) + (a - 1) * c - k),
            (a + 1) - (a - 1) * c + k, 2 * ((a - 1) - (a + 1) * c), (a + 1) - (a - 1) * c - k)
    }

    /// Control side. The exact frequency response H(e^{jω}) at `frequency`: linear magnitude and phase
    /// in radians (−π…π). Evaluated in Double with libm; valid for 0 ≤ frequency ≤ sampleRate/2.
    public func response(at frequency: Double, sampleRate: Double) -> (magnitude: Double, phase: Double) {
        let w = 2 * Double.pi * frequency / sampleRate
        let c1 = cos(w), s1 = sin(w)
        let c2 = cos(2 * w), s2 = sin(2 * w)
        // z⁻ⁿ = cos nω − j sin nω
        let nr = b0 + b1 * c1 + b2 * c2
        let ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2
        let di = -(a1 * s1 + a2 * s2)
        let den = dr * dr + di * di
        let hr = (nr * dr + ni * di) / den
        let hi = (ni * dr - nr * di) / den
        return ((hr * hr + hi * hi).squareRoot(), atan2(hi, hr))
    }
}

/// One biquad section with its state, in direct form I (Double state and arithmetic, so low-frequency
/// designs at 48 kHz keep their analytic response; Float input and output). Direct form I keeps past
/// inputs and outputs as its state, which stay meaningful when the coefficients glide, and it has no
/// internal nodes that can overflow (J. O. Smith, *Introduction to Digital Filters*, "Direct-Form I").
public struct Biquad: BitwiseCopyable {
    public var coefficients: BiquadCoefficients
    @usableFromInline var x1: Double
    @usableFromInline var x2: Double
    @usableFromInline var y1: Double
    @usableFromInline var y2: Double

    @inlinable
    public init(_ coefficients: BiquadCoefficients = .identity) {
        self.coefficients = coefficients
        x1 = 0
        x2 = 0
        y1 = 0
        y2 = 0
    }

    /// Clears the state (the filter's memory of past samples).
    @inlinable
    public mutating func reset() {
        x1 = 0
        x2 = 0
        y1 = 0
        y2 = 0
    }

    /// Filters one sample. Outputs below 1e-30 are flushed to zero (no subnormals).
    @inlinable
    public mutating func process(_ x: Double) -> Double {
        let k = coefficients
        let y = Denormal.flush(k.b0 * x + k.b1 * x1 + k.b2 * x2 - k.a1 * y1 - k.a2 * y2)
        x2 = x1
        x1 = x
        y2 = y1
        y1 = y
        return y
    }

    /// Filters `count` samples of `buffer` in place.
    @inlinable
    public mutating func process(_ buffer: UnsafeMutablePointer<Float>, count: Int) {
        let k = coefficients
        var (px1, px2, py1, py2) = (x1, x2, y1, y2)
        for i in 0..<count {
            let x = Double(buffer[i])
            let y = Denormal.flush(k.b0 * x + k.b1 * px1 + k.b2 * px2 - k.a1 * py1 - k.a2 * py2)
            px2 = px1
            px1 = x
            py2 = py1
            py1 = y
            buffer[i] = Float(y)
        }
        (x1, x2, y1, y2) = (px1, px2, py1, py2)
    }
}
