// Pure (render or control side). Distance attenuation: OpenAL 1.1's seven distance models (§3.4) and
// AVAudioEnvironmentNode's three, which are OpenAL's clamped variants.

/// OpenAL 1.1 distance models; raw values are the `AL_DISTANCE_MODEL` constants.
public enum DistanceModel: Int32, Sendable, BitwiseCopyable, CaseIterable {
    case none = 0
    case inverse = 0xD001
    case inverseClamped = 0xD002
    case linear = 0xD003
    case linearClamped = 0xD004
    case exponent = 0xD005
    case exponentClamped = 0xD006

    /// True for the variants that clamp the distance to referenceDistance … maximumDistance first.
    @inlinable
    public var isClamped: Bool { self == .inverseClamped || self == .linearClamped || self == .exponentClamped }
}

/// AVAudioEnvironmentDistanceAttenuationModel (raw values as Apple's enum).
///
/// Apple describes `referenceDistance` as "the minimum distance at which attenuation is applied" and
/// `maximumDistance` as "the distance beyond which no further attenuation is applied", which is what
/// OpenAL's clamped variants do; `distanceModel` maps each onto one.
public enum EnvironmentDistanceModel: Int, Sendable, BitwiseCopyable, CaseIterable {
    case exponential = 1
    case inverse = 2
    case linear = 3

    /// The OpenAL model with the same formula and clamping.
    @inlinable
    public var distanceModel: DistanceModel {
        switch self {
        case .exponential: return .exponentClamped
        case .inverse: return .inverseClamped
        case .linear: return .linearClamped
        }
    }
}

/// Distance attenuation parameters and the gain they give (all distances in metres).
///
/// With d the source–listener distance, ref = `referenceDistance`, max = `maximumDistance`,
/// r = `rolloffFactor` (OpenAL 1.1 specification §3.4.2–3.4.4; AVAudioEnvironmentNode.h):
///
///     clamped variants first:  d ← min(max(d, ref), max)
///     inverse:      g = ref / (ref + r·(d − ref))
///     linear:       d ← min(d, max);  g = 1 − r·(d − ref)/(max − ref)
///     exponent:     g = (d/ref)^(−r)
///     none:         g = 1
///
/// "If the formula can not be evaluated then the source will not be attenuated" (Apple): g = 1 when
/// ref ≤ 0 (inverse, exponent), max ≤ ref (linear), the inverse denominator is ≤ 0 (d < ref with r > 1
/// reaching the pole), or d ≤ 0 (exponent). A rolloff of 0 gives g = 1 in every model. The linear model's
/// gain is floored at 0 (with r > 1 the formula goes negative before d reaches max; OpenAL Soft does the
/// same). Non-finite inputs give g = 1.
///
/// Defaults are OpenAL's (AL_INVERSE_DISTANCE_CLAMPED, ref 1, max FLT_MAX, rolloff 1). Apple's defaults
/// are `EnvironmentDistanceModel.inverse` with ref 1, max 100 000, rolloff 1 (`environmentDefault`).
public struct DistanceAttenuation: Sendable, BitwiseCopyable, Equatable {
    public var model: DistanceModel
    public var referenceDistance: Double
    public var maximumDistance: Double
    public var rolloffFactor: Double

    @inlinable
    public init(
        model: DistanceModel = .inverseClamped, referenceDistance: Double = 1,
        maximumDistance: Double = Double(Float.greatestFiniteMagnitude), rolloffFactor: Double = 1
    ) {
        self.model = model
        self.referenceDistance = referenceDistance
        self.maximumDistance = maximumDistance
        self.rolloffFactor = rolloffFactor
    }

    /// AVAudioEnvironmentNode's parameters (maximum distance default 100 000 m).
    @inlinable
    public init(
        environmentModel: EnvironmentDistanceModel, referenceDistance: Double = 1,
        maximumDistance: Double = 100_000, rolloffFactor: Double = 1
    ) {
        self.init(
            model: environmentModel.distanceModel, referenceDistance: referenceDistance,
            maximumDistance: maximumDistance, rolloffFactor: rolloffFactor)
    }

    /// AVAudioEnvironmentNode's defaults: inverse (clamped), ref 1 m, max 100 000 m, rolloff 1.
    @inlinable
    public static var environmentDefault: DistanceAttenuation { DistanceAttenuation(environmentModel: .inverse) }

    /// The linear gain at `distance` metres.
    @inlinable
    public func gain(distance: Double) -> Double {
        let ref = referenceDistance
        let maxD = maximumDistance
        let r = rolloffFactor
        guard distance.isFinite, ref.isFinite, maxD.isFinite, r.isFinite else { return 1 }
        var d = distance
        if model.isClamped {
            // OpenAL: "distance = max(distance, AL_REFERENCE_DISTANCE); distance = min(distance, AL_MAX_DISTANCE)".
            d = min(max(d, ref), maxD)
        }
        switch model {
        case .none:
            return 1
        case .inverse, .inverseClamped:
            guard ref > 0 else { return 1 }
            let denominator = ref + r * (d - ref)
            guard denominator > 0 else { return 1 }
            return ref / denominator
        case .linear, .linearClamped:
            guard maxD > ref else { return 1 }
            d = min(d, maxD)
            return max(0, 1 - r * (d - ref) / (maxD - ref))
        case .exponent, .exponentClamped:
            guard ref > 0, d > 0 else { return 1 }
            if r == 0 { return 1 }
            return EffectMath.exp(-r * EffectMath.log(d / ref))
        }
    }
}
