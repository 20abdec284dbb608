// Render side (setRotation, process, reset) and control side (init, deallocate). The 3D mixer's
// "ambience bed" source mode: every channel of a multichannel source placed around the listener.

/// A rotation between two right-handed frames: the images of the x, y and z axes.
public struct SpatialRotation: Sendable, BitwiseCopyable, Equatable {
    public var x: SpatialVector
    public var y: SpatialVector
    public var z: SpatialVector

    @inlinable
    public init(x: SpatialVector, y: SpatialVector, z: SpatialVector) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// No rotation.
    @inlinable
    public static var identity: SpatialRotation {
        SpatialRotation(x: SpatialVector(1, 0, 0), y: SpatialVector(0, 1, 0), z: SpatialVector(0, 0, 1))
    }

    /// `v` in the rotated frame.
    @inlinable
    public func apply(_ v: SpatialVector) -> SpatialVector {
        SpatialVector(
            x.x * v.x + y.x * v.y + z.x * v.z,
            x.y * v.x + y.y * v.y + z.y * v.z,
            x.z * v.x + y.z * v.y + z.z * v.z)
    }

    /// From a bed's own frame (its front −z, up y) to the listener's, for a bed facing `facing` (world
    /// coordinates; zero: the world's front, −z) heard by a listener turned to `orientation`. The bed's
    /// up is the world's up, unless it faces straight up or down (then its up is the world's −z or +z).
    @inlinable
    public init(bedFacing facing: SpatialVector, orientation: ListenerOrientation) {
        let forward = facing.normalized ?? SpatialVector(0, 0, -1)
        var worldUp = SpatialVector(0, 1, 0)
        if abs(forward.dot(worldUp)) > 0.999_999 { worldUp = SpatialVector(0, 0, forward.y > 0 ? 1 : -1) }
        let right = (forward.cross(worldUp)).normalized ?? SpatialVector(1, 0, 0)
        let up = right.cross(forward)
        // Bed-local x, y, z (right, up, back) in world coordinates, then seen by the listener.
        self.init(
            x: orientation.listenerLocal(right), y: orientation.listenerLocal(up),
            z: orientation.listenerLocal(-1 * forward))
    }
}

/// AVAudio3DMixingSourceMode.ambienceBed: each channel of the source is a far-field source at its
/// channel's place in the bus's layout (no distance attenuation, no Doppler, no cone), around the
/// listener rather than at the source's position; the bed turns with the listener's orientation and
/// with the source's `direction` (its front). Every channel is encoded into the environment's
/// first-order B-format bus (`AmbisonicEncoder`), which the environment decodes once to its output
/// layout; an LFE channel goes to W alone.
///
/// Channel places (azimuths in degrees, 0 ahead, positive right; the WAVE/SMPTE channel orders):
/// 1: C 0 · 2: L R −30 30 · 3: L R C · 4: L R Ls Rs −45 45 −135 135 · 5: L R C Ls Rs (−110, 110) ·
/// 6 (5.1): L R C LFE Ls Rs · 7 (6.1): 5.1 + Cs 180 · 8 (7.1): L R C LFE Lrs Rrs −135 135, Lss Rss
/// −90 90; other counts: evenly around the circle, clockwise from the front.
///
/// Cost: 4 multiply-adds per sample and channel plus a gain pass. Memory: one encoder and one unit
/// vector per channel. Thread contract: `init`/`deallocate` on the control side; the rest RT-safe.
public struct AmbienceBed {
    public let channelCount: Int
    @usableFromInline let encoders: UnsafeMutablePointer<AmbisonicEncoder>
    /// Each channel's unit vector in the bed's frame; zero for an LFE channel.
    @usableFromInline let directions: UnsafeMutablePointer<SpatialVector>

    /// Channel azimuths for a bed of `count` channels (nil: LFE), as listed in the type's description.
    public static func channelAzimuths(count: Int) -> [Double?] {
        switch count {
        case 1: return [0]
        case 2: return [-30, 30]
        case 3: return [-30, 30, 0]
        case 4: return [-45, 45, -135, 135]
        case 5: return [-30, 30, 0, -110, 110]
        case 6: return [-30, 30, 0, nil, -110, 110]
        case 7: return [-30, 30, 0, nil, -110, 110, 180]
        case 8: return [-30, 30, 0, nil, -135, 135, -90, 90]
        default:
            return (0..<max(0, count)).map { c in
                let degrees = 360 * Double(c) / Double(count)
                return degrees > 180 ? degrees - 360 : degrees
            }
        }
    }

    /// Control side. A bed for a source of `channelCount` (≥ 1) channels, facing the listener's front.
    public init(channelCount: Int) {
        precondition(channelCount >= 1)
        self.channelCount = channelCount
        encoders = .allocate(capacity: channelCount)
        encoders.initialize(repeating: AmbisonicEncoder(), count: channelCount)
        directions = .allocate(capacity: channelCount)
        for (c, azimuth) in Self.channelAzimuths(count: channelCount).enumerated() {
            let vector = azimuth.map { SpeakerLayout.Speaker(channel: c, azimuthDegrees: $0).unitVector }
            (directions + c).initialize(to: vector ?? SpatialVector(0, 0, 0))
        }
        setRotation(.identity, gain: 1, rampFrames: 0)
    }

    /// Control side, once no program or command can reach the bed.
    public func deallocate() {
        encoders.deallocate()
        directions.deallocate()
    }

    /// Glides every channel to its place under `rotation` (bed frame → listener frame) at `gain`.
    @inlinable
    public func setRotation(_ rotation: SpatialRotation, gain: Float, rampFrames: Int) {
        for c in 0..<channelCount {
            let v = directions[c]
            if v.x == 0 && v.y == 0 && v.z == 0 {
                encoders[c].setOmnidirectional(gain: gain, rampFrames: rampFrames)
            } else {
                encoders[c].setDirection(
                    SourceDirection(localVector: rotation.apply(v)), gain: gain,
                    rampFrames: rampFrames)
            }
        }
    }

    /// Encodes `frames` of each channel of `source` (at the source's `gain` times the connection's
    /// `fade`, both advanced by the caller) into `bformat`; `scratch` holds `frames` samples.
    @inlinable
    public func process(
        source: BusRef, gain: ParameterRamp, fade: ParameterRamp, scratch: UnsafeMutablePointer<Float>,
        bformat: BusRef, frames: Int
    ) {
        for c in 0..<min(channelCount, source.channelCount) {
            MixKernel.clear(scratch, count: frames)
            var g = gain
            var f = fade
            MixKernel.accumulate(source.channel(c), into: scratch, count: frames, gain: &g, fade: &f)
            encoders[c].process(input: UnsafePointer(scratch), bformat: bformat, frames: frames)
        }
    }

    /// Ends every glide at its target.
    @inlinable
    public func reset() {
        for c in 0..<channelCount { encoders[c].reset() }
    }
}
