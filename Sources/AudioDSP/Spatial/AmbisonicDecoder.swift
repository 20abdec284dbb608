// Render side (process) and control side (init, deallocate). The "sound field" algorithm's
// environment-wide half: a first-order B-format bus (ACN/SN3D) decoded to speaker feeds.

/// Decoder weighting per order (J. Daniel, *Représentation de champs acoustiques, application à la
/// transmission et à la reproduction de scènes sonores complexes dans un contexte multimédia*, thesis,
/// Paris 6, 2001, §3.3; first order, horizontal).
public enum AmbisonicDecoderWeighting: Sendable, BitwiseCopyable {
    /// g₁ = 1: the "basic" (velocity) decoder; sharpest, with out-of-phase rear lobes.
    case basic
    /// g₁ = cos(π/4) = 0.707: maximises the energy vector for 2-D first order (max-rE).
    case maxRE
    /// g₁ = 1/2: "in-phase" (cardioid); no speaker ever gets an opposite-phase feed.
    case inPhase

    @inlinable
    public var firstOrderGain: Double {
        switch self {
        case .basic: return 1
        case .maxRE: return 0.707_106_781_186_547_524_4
        case .inPhase: return 0.5
        }
    }
}

/// A first-order horizontal sampling ("projection") decoder: each speaker at azimuth φᵢ gets
///
///     gᵢ = k · (W + 2·g₁·(X·cos φᵢ − Y·sin φᵢ)) / N
///
/// (φ positive to the right, so −Y·sin φ is the left-positive Y projected on the speaker), with g₁ from
/// the weighting and k = √(N / (1 + 2g₁²)), which makes the total power exactly 1 for a horizontal source
/// on any regular polygon of N ≥ 3 speakers (Σᵢ cos²(φ − φᵢ) = N/2). Z is not reproduced (horizontal
/// layouts); elevated sources lose directivity and up to 1/(1 + 2g₁²) of their power.
///
/// Stereo output (a layout of two speakers) is decoded as two virtual cardioid microphones aimed at
/// ±90° (in-phase weighting, k = √2): left = (W + Y)/√2, right = (W − Y)/√2, unit power straight ahead,
/// +3 dB at the sides. Irregular rigs use the same projection formula; their power then varies with
/// direction: −3.3 … +2.1 dB on 5.1, −1.3 … +1.0 dB on 7.1 (max-rE).
///
/// Cost: 4·N multiply-adds per sample for the whole environment; no latency. Thread contract:
/// `init`/`deallocate` on the control side; `process` is RT-safe.
public struct AmbisonicDecoder: BitwiseCopyable {
    /// Output channels (the layout's, including LFE).
    public let channelCount: Int
    public let speakerCount: Int
    /// Per speaker: output channel and the four matrix coefficients (W, Y, Z, X).
    @usableFromInline let speakerChannel: UnsafeMutablePointer<Int>
    @usableFromInline let matrix: UnsafeMutablePointer<Float>

    /// Control side. Builds the decoding matrix for `layout`.
    public init(layout: SpeakerLayout, weighting: AmbisonicDecoderWeighting = .maxRE) {
        channelCount = layout.channelCount
        speakerCount = layout.speakers.count
        speakerChannel = .allocate(capacity: speakerCount)
        matrix = .allocate(capacity: 4 * speakerCount)
        for (i, row) in Self.matrixRows(layout: layout, weighting: weighting).enumerated() {
            speakerChannel[i] = layout.speakers[i].channel
            for k in 0..<4 { matrix[4 * i + k] = Float(row[k]) }
        }
    }

    /// Control side. The decoding rows (W, Y, Z, X coefficients) in the layout's speaker order.
    public static func matrixRows(layout: SpeakerLayout, weighting: AmbisonicDecoderWeighting) -> [[Double]] {
        let n = layout.speakers.count
        if n == 2 {
            // Virtual cardioids at ±90°: the speaker on the left (smaller azimuth) takes W + Y.
            let s = 0.707_106_781_186_547_524_4
            let leftFirst = layout.speakers[0].azimuthDegrees <= layout.speakers[1].azimuthDegrees
            let left = [s, s, 0, 0]
            let right = [s, -s, 0, 0]
            return leftFirst ? [left, right] : [right, left]
        }
        let g1 = weighting.firstOrderGain
        let k = EffectMath.squareRoot(Double(n) / (1 + 2 * g1 * g1)) / Double(n)
        return layout.speakers.map { speaker in
            let v = speaker.unitVector
            // cos φ = −v.z (front), sin φ = v.x (right): X·cos φ − Y·sin φ.
            return [k, -2 * g1 * k * v.x, 0, 2 * g1 * k * -v.z]
        }
    }

    /// Control side. Frees the matrix.
    public func deallocate() {
        speakerChannel.deallocate()
        matrix.deallocate()
    }

    /// Adds the decoded `bformat` (channels W, Y, Z, X) to the speaker channels of `output`.
    @inlinable
    public func process(bformat: BusRef, output: BusRef, frames: Int) {
        let w = bformat.channel(0)
        let y = bformat.channel(1)
        let z = bformat.channel(2)
        let x = bformat.channel(3)
        for s in 0..<speakerCount {
            let out = output.channel(speakerChannel[s])
            let m = matrix + 4 &* s
            let (cw, cy, cz, cx) = (m[0], m[1], m[2], m[3])
            for i in 0..<frames {
                out[i] += cw * w[i] + cy * y[i] + cz * z[i] + cx * x[i]
            }
        }
    }
}
