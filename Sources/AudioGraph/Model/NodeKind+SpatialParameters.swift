// Control side. The 3D parameters: AVAudio3DMixing on every source kind, and the environment node's
// listener, distance model, Doppler and reverb (inventory §3, §4, §11; SPATIAL.md).
import AudioDSP

extension NodeKind {
    /// Names of the speaker layouts an environment can render to, in `SpeakerLayout.presets` order.
    public static let environmentLayoutNames = ["stereo", "quad", "5.1", "7.1", "octagon"]
    /// Distance models (OpenAL's names).
    public static let distanceModelNames = [
        "none", "inverse", "inverseClamped", "linear", "linearClamped", "exponent",
        "exponentClamped"
    ]
    static let distanceModels: [DistanceModel] = [
        .none, .inverse, .inverseClamped, .linear, .linearClamped, .exponent,
        .exponentClamped
    ]

    private static func coordinate(_ name: ParameterKey, _ summary: String, default value: Double = 0) -> ParameterSpec
    {
        ParameterSpec(name, .float, unit: "m", range: -1e6...1e6, default: .float(value), summary)
    }

    /// AVAudio3DMixing: held by the source, used by every environment it feeds.
    static let spatialSourceParameters: [ParameterSpec] = [
        coordinate(.positionX, "Position in the environment, x (right); also /node/<name>/position x y z."),
        coordinate(.positionY, "Position, y (up)."),
        coordinate(.positionZ, "Position, z (towards the default listener's back; −z is ahead of it)."),
        ParameterSpec(
            .velocityX, .float, unit: "m/s", range: -1e4...1e4, default: .float(0),
            "Velocity for Doppler, x; also /node/<name>/velocity x y z."),
        ParameterSpec(.velocityY, .float, unit: "m/s", range: -1e4...1e4, default: .float(0), "Velocity, y."),
        ParameterSpec(.velocityZ, .float, unit: "m/s", range: -1e4...1e4, default: .float(0), "Velocity, z."),
        coordinate(
            .directionX, "Facing direction for the cone, x (0 0 0: omnidirectional); also /node/<name>/direction x y z."
        ),
        coordinate(.directionY, "Facing direction, y."),
        coordinate(.directionZ, "Facing direction, z."),
        ParameterSpec(
            .coneInnerAngle, .float, unit: "°", range: 0...360, default: .float(360),
            "Full angle of the cone inside which the source is at full level."),
        ParameterSpec(
            .coneOuterAngle, .float, unit: "°", range: 0...360, default: .float(360),
            "Full angle outside which the level is coneOuterGain (linear in between)."),
        ParameterSpec(
            .coneOuterGain, .float, unit: "linear", range: 0...1, default: .float(0),
            "Gain outside the outer cone."),
        ParameterSpec(
            .reverbBlend, .float, unit: "", range: 0...1, default: .float(0), smoothed: true,
            "Share sent to the environment's reverb (equal-power crossfade with the direct path)."),
        ParameterSpec(
            .obstruction, .float, unit: "dB", range: -100...0, default: .float(0), smoothed: true,
            "Level of the direct path at 5 kHz (low-pass); the reverb send is untouched."),
        ParameterSpec(
            .occlusion, .float, unit: "dB", range: -100...0, default: .float(0), smoothed: true,
            "Level of both the direct path and the reverb send at 5 kHz (low-pass plus a broadband part)."),
        ParameterSpec(
            .renderingAlgorithm, .string, default: .string("equalPowerPanning"),
            choices: SpatialRenderingAlgorithm.allCases.map(\.name),
            "How the environment renders this source; auto: HRTFHQ on headphones, VBAP on speaker rigs, else equal power."
        ),
        ParameterSpec(
            .sourceMode, .string, default: .string("spatializeIfMono"),
            choices: ["spatializeIfMono", "bypass", "pointSource", "ambienceBed"],
            "spatializeIfMono: mono sources are placed, stereo passes through; bypass: always passes through; "
                + "pointSource: downmixed and placed; ambienceBed: each channel around the listener at its "
                + "layout place, turned by direction, not moved by position.")
    ]

    /// AVAudioEnvironmentNode: the listener, distance attenuation, Doppler, reverb and output layout.
    static let environmentParameters: [ParameterSpec] = [
        ParameterSpec(
            .layout, .string, default: .string("stereo"), creationOnly: true, choices: environmentLayoutNames,
            "Output layout (channels 2, 4, 6, 8, 8; 5.1 and 7.1 keep LFE silent). Set at creation."),
        ParameterSpec(
            .speakers, .string, default: .string(""), creationOnly: true,
            "A custom rig instead of layout: one entry per output channel, an azimuth in degrees (0 ahead, "
                + "positive right) or lfe, e.g. \"-30, 30, 0, lfe, -110, 110\". Set at creation."),
        coordinate(.listenerX, "Listener position, x; also /node/<name>/listener/position x y z."),
        coordinate(.listenerY, "Listener position, y."),
        coordinate(.listenerZ, "Listener position, z."),
        ParameterSpec(
            .listenerYaw, .float, unit: "°", range: -360...360, default: .float(0),
            "Listener orientation: positive turns right; also /node/<name>/listener/orientation."),
        ParameterSpec(.listenerPitch, .float, unit: "°", range: -90...90, default: .float(0), "Positive looks up."),
        ParameterSpec(.listenerRoll, .float, unit: "°", range: -180...180, default: .float(0), "Positive tilts right."),
        ParameterSpec(
            .distanceModel, .string, default: .string("inverseClamped"), choices: distanceModelNames,
            "Distance attenuation (OpenAL's formulas; AVAudioEnvironment's exponential, inverse and linear are the clamped ones)."
        ),
        ParameterSpec(
            .referenceDistance, .float, unit: "m", range: 0...1e6, default: .float(1),
            "Distance with no attenuation."),
        ParameterSpec(
            .maximumDistance, .float, unit: "m", range: 0...1e6, default: .float(100_000),
            "Distance beyond which the clamped models attenuate no further."),
        ParameterSpec(
            .rolloffFactor, .float, unit: "", range: 0...1000, default: .float(1), "Steepness of the attenuation."),
        ParameterSpec(.speedOfSound, .float, unit: "m/s", range: 1...10_000, default: .float(343.3), "For Doppler."),
        ParameterSpec(.dopplerFactor, .float, unit: "", range: 0...10, default: .float(1), "0 turns Doppler off."),
        ParameterSpec(
            .headphones, .bool, default: .bool(false),
            "The output is heard on headphones: the auto algorithm picks HRTFHQ."),
        ParameterSpec(
            .hrtf, .string, default: .string(""), filePath: true,
            "SOFA file for HRTF/HRTFHQ (\"\": the MIT KEMAR set libmysofa ships); resampled at load."),
        ParameterSpec(.reverb, .bool, default: .bool(false), "Turns the environment reverb on."),
        ParameterSpec(
            .reverbPreset, .string, default: .string(ReverbPreset.mediumHall.name), choices: ReverbPreset.allNames,
            "Factory reverb preset."),
        ParameterSpec(
            .reverbLevel, .float, unit: "dB", range: -40...40, default: .float(0), smoothed: true,
            "Level of the reverb return."),
        ParameterSpec(
            .reverbFilterType, .string, default: .string("parametric"), smoothed: true,
            choices: EQFilterType.allNames, "Type of the one EQ band on the reverb return."),
        ParameterSpec(
            .reverbFilterFrequency, .float, unit: "Hz", range: 20...20_000, default: .float(2_000), smoothed: true,
            "Its centre or corner frequency."),
        ParameterSpec(
            .reverbFilterBandwidth, .float, unit: "octaves", range: 0.05...5, default: .float(1), smoothed: true,
            "Its bandwidth."),
        ParameterSpec(
            .reverbFilterGain, .float, unit: "dB", range: -96...24, default: .float(0), smoothed: true,
            "Its gain (parametric and shelves)."),
        ParameterSpec(
            .reverbFilterBypass, .bool, default: .bool(true), smoothed: true,
            "true leaves the reverb return unfiltered (the band starts bypassed, like an EQ band)."),
        ParameterSpec(
            .outputVolume, .float, unit: "linear", range: 0...1, default: .float(1), smoothed: true,
            "Gain of the environment's output."),
        ParameterSpec(
            .channels, .int, unit: "channels", range: 1...64, default: .int(2), readOnly: true,
            "Output channels: the layout's.")
    ]

    /// The reverb return filter's EQ kernel index (band 0) of `key`, or nil when `key` is not one of the
    /// filter's parameters.
    static func reverbFilterIndex(_ key: ParameterKey) -> Int? {
        switch key {
        case .reverbFilterType: return EQKernel.parameterIndex(band: 0, .filterType)
        case .reverbFilterFrequency: return EQKernel.parameterIndex(band: 0, .frequency)
        case .reverbFilterBandwidth: return EQKernel.parameterIndex(band: 0, .bandwidth)
        case .reverbFilterGain: return EQKernel.parameterIndex(band: 0, .gain)
        case .reverbFilterBypass: return EQKernel.parameterIndex(band: 0, .bypass)
        default: return nil
        }
    }

    /// The reverb filter's parameters, in kernel order.
    static let reverbFilterKeys: [ParameterKey] = [
        .reverbFilterType, .reverbFilterFrequency, .reverbFilterBandwidth,
        .reverbFilterGain, .reverbFilterBypass
    ]

    /// The kernel value of a reverb filter parameter.
    static func reverbFilterValue(_ key: ParameterKey, _ value: ParameterValue) -> Double {
        switch key {
        case .reverbFilterType: return Double(EQFilterType.allNames.firstIndex(of: value.stringValue ?? "") ?? 0)
        case .reverbFilterBypass: return value.boolValue == true ? 1 : 0
        default: return value.doubleValue ?? 0
        }
    }

    /// True for the source parameters that move a voice (all 3D ones), by key raw value.
    private static let spatialSourceKeyFlags: [Bool] = {
        var flags = [Bool](repeating: false, count: ParameterKey.allCases.count)
        for spec in spatialSourceParameters { if let key = spec.key { flags[Int(key.rawValue)] = true } }
        return flags
    }()

    /// True when `key` is one of the 3D source parameters (`spatialSourceParameters`).
    static func isSpatialSourceKey(_ key: ParameterKey) -> Bool { spatialSourceKeyFlags[Int(key.rawValue)] }
}
