// Control side (construction) and render side (read-only use). Horizontal loudspeaker layouts for the
// multichannel algorithms (vector-base panning, sound field): which output channel sits at which azimuth.

/// A horizontal speaker layout: the azimuth of every output channel that carries a speaker.
///
/// Azimuths are in degrees, 0 ahead, positive to the right (the 3D mixer's convention), −180 … 180.
/// Channels not listed (LFE) receive nothing. Presets and their channel orders:
///
/// | layout | channels (order) | azimuths |
/// | --- | --- | --- |
/// | `stereo` | L R | −30, 30 |
/// | `quad` | L R Ls Rs | −45, 45, −135, 135 |
/// | `surround51` | L R C LFE Ls Rs (SMPTE/WAVE order) | −30, 30, 0, –, −110, 110 (ITU-R BS.775) |
/// | `surround71` | L R C LFE Lrs Rrs Lss Rss (WAVE order) | −30, 30, 0, –, −135, 135, −90, 90 (ITU-R BS.2051 system I) |
/// | `octagon` | clockwise from the front | 0, 45, 90, 135, 180, −135, −90, −45 |
///
/// Unit vectors are built from |azimuth| with the sign applied afterwards, so a left–right symmetric
/// layout has exactly mirrored vectors (the panners' mirror symmetry depends on it).
public struct SpeakerLayout: Sendable, Equatable {
    /// One speaker: its output channel and azimuth in degrees.
    public struct Speaker: Sendable, BitwiseCopyable, Equatable {
        public var channel: Int
        public var azimuthDegrees: Double

        @inlinable
        public init(channel: Int, azimuthDegrees: Double) {
            self.channel = channel
            self.azimuthDegrees = azimuthDegrees
        }

        /// Unit vector in listener coordinates (x right, z behind): (sin az, 0, −cos az). A speaker straight
        /// behind gets x = 0 exactly (sin π is 1.2e-16 in floating point), so it is its own mirror image.
        @inlinable
        public var unitVector: SpatialVector {
            if azimuthDegrees.magnitude == 180 { return SpatialVector(0, 0, 1) }
            let (s, c) = SpatialMath.sinCos(SpatialMath.radians(azimuthDegrees))
            return SpatialVector(s, 0, -c)
        }
    }

    /// Output channels, including those without a speaker (LFE).
    public let channelCount: Int
    /// Speakers in channel order.
    public let speakers: [Speaker]

    /// A layout of `channelCount` channels with `speakers`; nil when a channel index is out of range or
    /// repeated, an azimuth is not finite, or there is no speaker.
    public init?(channelCount: Int, speakers: [Speaker]) {
        guard channelCount >= 1, !speakers.isEmpty else { return nil }
        var used = Set<Int>()
        for s in speakers {
            guard s.channel >= 0, s.channel < channelCount, s.azimuthDegrees.isFinite, used.insert(s.channel).inserted
            else { return nil }
        }
        self.channelCount = channelCount
        self.speakers = speakers.map {
            // Wrap into −180 … 180 so sorting and pairing see one representation.
            var a = $0.azimuthDegrees.truncatingRemainder(dividingBy: 360)
            if a > 180 { a -= 360 }
            if a < -180 { a += 360 }
            return Speaker(channel: $0.channel, azimuthDegrees: a)
        }
    }

    /// A custom layout: speaker i on channel i at `azimuthsDegrees[i]`, plus LFE channels that carry no
    /// speaker inserted at `lfeChannels` (indices in the final channel order).
    public init?(azimuthsDegrees: [Double], lfeChannels: [Int] = []) {
        let total = azimuthsDegrees.count + lfeChannels.count
        let lfe = Set(lfeChannels)
        guard lfe.count == lfeChannels.count, lfeChannels.allSatisfy({ $0 >= 0 && $0 < total }) else { return nil }
        var speakers: [Speaker] = []
        var next = 0
        for channel in 0..<total where !lfe.contains(channel) {
            speakers.append(Speaker(channel: channel, azimuthDegrees: azimuthsDegrees[next]))
            next += 1
        }
        self.init(channelCount: total, speakers: speakers)
    }

    public static let stereo = SpeakerLayout(azimuthsDegrees: [-30, 30])!
    public static let quad = SpeakerLayout(azimuthsDegrees: [-45, 45, -135, 135])!
    public static let surround51 = SpeakerLayout(azimuthsDegrees: [-30, 30, 0, -110, 110], lfeChannels: [3])!
    public static let surround71 = SpeakerLayout(
        azimuthsDegrees: [-30, 30, 0, -135, 135, -90, 90], lfeChannels: [3])!
    public static let octagon = SpeakerLayout(azimuthsDegrees: [0, 45, 90, 135, 180, -135, -90, -45])!

    /// The preset layouts by name (for patches and OSC).
    public static let presets: [(name: String, layout: SpeakerLayout)] = [
        ("stereo", stereo), ("quad", quad), ("5.1", surround51), ("7.1", surround71), ("octagon", octagon)
    ]
}
