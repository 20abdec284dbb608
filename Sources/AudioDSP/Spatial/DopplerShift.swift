// Pure (render or control side). OpenAL 1.1's Doppler shift (§3.5.2 "Velocity", AL_DOPPLER_FACTOR,
// AL_SPEED_OF_SOUND) as a pitch ratio for `DopplerResampler` or a player's rate.

/// The Doppler pitch ratio f′/f of a moving source heard by a moving listener.
///
/// OpenAL 1.1 specification, §3.5.2, with SL the vector from the source to the listener, SS the speed of
/// sound and DF the Doppler factor:
///
///     vls = (SL · listenerVelocity) / |SL|,   vss = (SL · sourceVelocity) / |SL|
///     vls = min(vls, SS/DF),                   vss = min(vss, SS/DF)
///     f′/f = (SS − DF·vls) / (SS − DF·vss)
///
/// A source moving towards the listener raises the pitch; so does a listener moving towards the source.
/// Edge cases: DF = 0, SS ≤ 0, coincident positions or non-finite input give 1 (no shift); a source
/// approaching at SS/DF or faster makes the denominator 0 and gives +∞, which the resampler clamps to
/// its maximum rate (OpenAL Soft does the same). Velocities in metres per second, like the speed of
/// sound (OpenAL's default 343.3 m/s).
public struct DopplerShift: Sendable, BitwiseCopyable, Equatable {
    /// AL_SPEED_OF_SOUND, m/s (OpenAL requires ≥ 0.0001).
    public var speedOfSound: Double
    /// AL_DOPPLER_FACTOR (≥ 0; 0 disables the shift).
    public var dopplerFactor: Double

    @inlinable
    public init(speedOfSound: Double = 343.3, dopplerFactor: Double = 1) {
        self.speedOfSound = speedOfSound
        self.dopplerFactor = dopplerFactor
    }

    /// f′/f for the given positions (m) and velocities (m/s), world coordinates.
    @inlinable
    public func pitchRatio(
        sourcePosition: SpatialVector, sourceVelocity: SpatialVector,
        listenerPosition: SpatialVector, listenerVelocity: SpatialVector
    ) -> Double {
        let ss = speedOfSound
        let df = dopplerFactor
        guard df > 0, ss > 0, df.isFinite, ss.isFinite else { return 1 }
        let sl = listenerPosition - sourcePosition
        let distance = sl.length
        guard distance > 0, distance.isFinite else { return 1 }
        let limit = ss / df
        let vls = min(sl.dot(listenerVelocity) / distance, limit)
        let vss = min(sl.dot(sourceVelocity) / distance, limit)
        guard vls.isFinite, vss.isFinite else { return 1 }
        let denominator = ss - df * vss
        if denominator <= 0 { return .infinity }
        return (ss - df * vls) / denominator
    }
}
