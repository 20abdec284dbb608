// Control side: init. Render side: update, apply (no allocation, no library calls).

/// The two reference channels made uncorrelated before the two-loudspeaker MDF, each at its own power.
///
/// SpeexDSP's MDF steps by the error normalised by the channels' summed power, per bin. Two correlated
/// channels (a stereo mix: each loudspeaker carries some of every source) have a correlation matrix
/// with eigenvalues 1 ± ρ, and the filter converges along the difference of the two loudspeakers'
/// responses (1 − ρ)/(1 + ρ) as fast as along their sum: 9 times slower at ρ = 0.8. An invertible
/// transform of the reference changes nothing the MDF can model (the echo stays linear in it), so the
/// MDF is given the symmetric whitening of the two channels, `D^½ R^−½ D^−½` (R their correlation
/// matrix, D their powers, both averaged over `averagingSeconds` of far-end sound): each output channel
/// keeps its input's power, the two are uncorrelated, uncorrelated channels pass unchanged, and the
/// transform moves smoothly with the statistics. The principal components would decorrelate as well,
/// but their axes turn by 90° as two uncorrelated channels of nearly equal power trade places, and the
/// MDF diverged on every such scene (docs/DECISIONS.md).
///
/// The correlation is taken at most `largestCorrelation` (0.75: the transform's gain is at most 2 along
/// the channels' difference), which keeps the gain on a nearly mono pair and on noise bounded.
public struct VoiceReferenceDecorrelation {
    /// The averaging of the channels' powers and cross power: cumulative over the first
    /// `averagingSeconds` of far-end sound, then exponential with that time constant.
    static let averagingSeconds = 5.0
    static let largestCorrelation = 0.75
    /// The correlation a few frames give is mostly chance (a single 10 ms frame of two uncorrelated
    /// signals can show 0.5): it counts in proportion to the frames seen, in full after this long.
    static let trustSeconds = 1.0
    var leftPower = 0.0
    var rightPower = 0.0
    var crossPower = 0.0
    var frames = 0
    /// The exponential averaging's weight per frame.
    let rate: Double
    let trustFrames: Double
    /// The transform, row by row: `(left, right)` → `(m.0 · left + m.1 · right, m.2 · left + m.3 · right)`.
    public private(set) var matrix: (Float, Float, Float, Float) = (1, 0, 0, 1)

    /// `frameSeconds`: the duration of the frames `update` is given.
    public init(frameSeconds: Double) {
        precondition(frameSeconds > 0)
        rate = min(1, frameSeconds / Self.averagingSeconds)
        trustFrames = max(1, Self.trustSeconds / frameSeconds)
    }

    /// One frame of far-end sound: its channels' energies and their cross energy (any common scale).
    public mutating func update(left: Double, right: Double, cross: Double) {
        frames += 1
        let weight = max(rate, 1 / Double(frames))
        leftPower += weight * (left - leftPower)
        rightPower += weight * (right - rightPower)
        crossPower += weight * (cross - crossPower)
        guard leftPower > 0 && rightPower > 0 else { return }
        // R = [[1, ρ], [ρ, 1]] has eigenvectors (1, 1) and (1, −1), eigenvalues 1 ± ρ, so
        // R^−½ = ½ [[a + b, a − b], [a − b, a + b]] with a = (1 + ρ)^−½, b = (1 − ρ)^−½.
        let limit = Self.largestCorrelation
        let trust = min(1, Double(frames) / trustFrames)
        let rho = min(max(trust * crossPower / EffectMath.squareRoot(leftPower * rightPower), -limit), limit)
        let a = 1 / EffectMath.squareRoot(1 + rho)
        let b = 1 / EffectMath.squareRoot(1 - rho)
        let ratio = EffectMath.squareRoot(leftPower / rightPower)
        // Each output channel at its input's power. Divided by the diagonal ½ (a + b) instead (each channel
        // at most as loud), PESQ in double talk was 0.01–0.09 lower on every mixed scene; the peaks of a
        // stereo mix stay within 5 % of the input's (docs/DECISIONS.md).
        let diagonal = Float(0.5 * (a + b))
        matrix = (diagonal, Float(0.5 * (a - b) * ratio), Float(0.5 * (a - b) / ratio), diagonal)
    }

    /// The transformed pair.
    @inline(__always)
    public func apply(_ left: Float, _ right: Float) -> (Float, Float) {
        (matrix.0 * left + matrix.1 * right, matrix.2 * left + matrix.3 * right)
    }
}
