// Control side. Parameter tables per node kind (the documentation tables are generated from these).
import AudioDSP

extension NodeKind {
    /// Every parameter a node of this kind has, in display order.
    public var parameters: [ParameterSpec] { parameterTable.specs }

    /// This kind's parameter table (an EQ's with the default band count), built once.
    public var parameterTable: ParameterTable {
        switch self {
        case .output: return ParameterTables.output
        case .mixer: return ParameterTables.mixer
        case .player: return ParameterTables.player
        case .audioplayer: return ParameterTables.audioplayer
        case .input: return ParameterTables.input
        case .reverb: return ParameterTables.reverb
        case .delay: return ParameterTables.delay
        case .distortion: return ParameterTables.distortion
        case .eq: return ParameterTables.eq[Self.defaultEQBandCount - 1]
        case .timepitch: return ParameterTables.timepitch
        case .varispeed: return ParameterTables.varispeed
        case .environment: return ParameterTables.environment
        case .voiceprocessor: return ParameterTables.voiceprocessor
        }
    }

    /// The table of a node of this kind created with `bandCount` EQ bands (other kinds ignore it).
    public func parameterTable(bandCount: Int) -> ParameterTable {
        guard self == .eq else { return parameterTable }
        if ParameterTables.eq.indices.contains(bandCount - 1) { return ParameterTables.eq[bandCount - 1] }
        return ParameterTable(Self.effectParameters(.eq, bandCount: bandCount))
    }

    /// The parameters as declared (built into `parameterTable` once).
    fileprivate var declaredParameters: [ParameterSpec] {
        switch self {
        case .output:
            return [
                ParameterSpec(
                    .channels, .int, unit: "channels", range: 1...64, default: .int(2), readOnly: true,
                    "Output channels (JACK ports out_1..N); set by the engine configuration.")
            ]
        case .environment:
            return Self.mixingParameters + Self.environmentParameters
        case .mixer:
            return Self.mixingParameters + Self.spatialSourceParameters + [
                ParameterSpec(
                    .outputVolume, .float, unit: "linear", range: 0...1, default: .float(1), smoothed: true,
                    "Gain applied to the mix (AVAudioMixerNode.outputVolume)."),
                ParameterSpec(
                    .channels, .int, unit: "channels", range: 1...64, default: .int(2),
                    "Channels of the mixer's output bus; inputs are up/down-mixed to it.")
            ]
        case .player:
            return Self.mixingParameters + Self.spatialSourceParameters + [
                ParameterSpec(
                    .buffer, .string, default: .string(""),
                    "Name of a loaded buffer to play (\"\" for none). Setting it (or file, start, frames) plays the new "
                        + "material from its start; items scheduled with enqueue stay queued after it."),
                ParameterSpec(
                    .file, .string, default: .string(""), filePath: true,
                    "Path of an audio file to load and play instead of a named buffer."),
                ParameterSpec(
                    .start, .int, unit: "frames", range: 0...Double(Int32.max), default: .int(0),
                    "First frame of the region to play."),
                ParameterSpec(
                    .frames, .int, unit: "frames", range: 0...Double(Int32.max), default: .int(0),
                    "Frames in the region; 0 plays to the end of the buffer."),
                ParameterSpec(.loop, .bool, default: .bool(false), "Loop the region until paused or stopped."),
                ParameterSpec(
                    .playing, .bool, default: .bool(false),
                    "True plays, false pauses; becomes false when a non-looping region ends."),
                Self.resumeAfterInterruptionParameter,
                ParameterSpec(
                    .channels, .int, unit: "channels", range: 1...64, default: .int(2), readOnly: true,
                    "Channels of the output bus: the scheduled buffer's channel count.")
            ]
        case .audioplayer:
            return Self.mixingParameters + Self.spatialSourceParameters + Self.audioPlayerParameters
        case .input:
            return Self.mixingParameters + Self.spatialSourceParameters + [
                ParameterSpec(
                    .channels, .int, unit: "channels", range: 1...64, default: .int(2), readOnly: true,
                    "Capture channels (JACK ports in_1..N); set by the engine configuration.")
            ] + Self.inputVoiceParameters
        case .reverb, .delay, .distortion, .eq, .timepitch, .varispeed:
            return Self.effectParameters(self, bandCount: Self.defaultEQBandCount)
        case .voiceprocessor:
            return Self.voiceProcessorParameters
        }
    }

    /// The parameters of a node of this kind created with `bands` EQ bands (other kinds ignore it).
    public func parameters(bandCount: Int) -> [ParameterSpec] { parameterTable(bandCount: bandCount).specs }

    /// AVAudioPlayer's properties (inventory §8).
    static let audioPlayerParameters: [ParameterSpec] = [
        ParameterSpec(
            .file, .string, default: .string(""), filePath: true,
            "Path of the audio file to play (decoded and prepared when set; any format `info` reads)."),
        ParameterSpec(.buffer, .string, default: .string(""), "Name of a loaded buffer to play instead of a file."),
        ParameterSpec(
            .numberOfLoops, .int, unit: "loops", range: Double(Int32.min)...Double(Int32.max), default: .int(0),
            "0 plays once, n plays n + 1 times, any negative number loops until stopped. Set while playing (or paused), the current pass finishes and n more follow: 0 ends playback with this pass."
        ),
        ParameterSpec(
            .currentTime, .float, unit: "s", range: 0...1e9, default: .float(0),
            "Playback position in the file; setting it seeks (also while playing). Reads the live position."),
        ParameterSpec(
            .duration, .float, unit: "s", range: 0...1e9, default: .float(0), readOnly: true,
            "Length of the file or buffer."),
        ParameterSpec(
            .rate, .float, unit: "×", range: 0.5...2, default: .float(1), smoothed: true,
            "Playback speed with the pitch kept (time-pitch); needs enableRate at creation."),
        ParameterSpec(
            .enableRate, .bool, default: .bool(false), creationOnly: true,
            "Allocates the time-pitch stage that `rate` needs (AVAudioPlayer.enableRate); set at creation."),
        ParameterSpec(
            .meteringEnabled, .bool, default: .bool(false),
            "Measures average and peak power per channel (read with /node/<name>/power)."),
        ParameterSpec(
            .playing, .bool, default: .bool(false),
            "True plays (from the current time), false pauses; false again when the file finishes."),
        resumeAfterInterruptionParameter,
        ParameterSpec(
            .channels, .int, unit: "channels", range: 1...64, default: .int(2), readOnly: true,
            "Channels of the file or buffer.")
    ]

    /// Whether a player the audio session paused for an interruption plays again when it ends.
    static let resumeAfterInterruptionParameter = ParameterSpec(
        .resumeAfterInterruption, .bool, default: .bool(true),
        "When an interruption paused it (/session/interruption), play again where it was once the interruption "
            + "ends with shouldResume (the server's return, /session/interrupt end), unless a request played, "
            + "paused or stopped it meanwhile. False: stay paused.")

    /// AVAudioMixing settings shared by every source kind; they apply where the node feeds a mixer.
    static let mixingParameters: [ParameterSpec] = [
        ParameterSpec(
            .volume, .float, unit: "linear", range: 0...1, default: .float(1), smoothed: true,
            "Gain on the mixer input this node feeds (travels with the node)."),
        ParameterSpec(
            .pan, .float, unit: "", range: -1...1, default: .float(0), smoothed: true,
            "Equal-power pan (mono sources) or balance (stereo) on a stereo mixer input."),
        ParameterSpec(
            .secondary, .bool, default: .bool(false),
            "Secondary audio (Wwise's BGM bus, a game's music): fades out while other audio plays "
                + "(/session/silence_secondary_audio) and back in after.")
    ]

    /// The spec named `name`, or nil.
    public func parameter(named name: String) -> ParameterSpec? { parameterTable.spec(named: name) }
}

/// The tables of every kind, built on first use and shared by all nodes (an EQ's for each band count).
private enum ParameterTables {
    static let output = ParameterTable(NodeKind.output.declaredParameters)
    static let mixer = ParameterTable(NodeKind.mixer.declaredParameters)
    static let player = ParameterTable(NodeKind.player.declaredParameters)
    static let audioplayer = ParameterTable(NodeKind.audioplayer.declaredParameters)
    static let input = ParameterTable(NodeKind.input.declaredParameters)
    static let reverb = ParameterTable(NodeKind.reverb.declaredParameters)
    static let delay = ParameterTable(NodeKind.delay.declaredParameters)
    static let distortion = ParameterTable(NodeKind.distortion.declaredParameters)
    static let timepitch = ParameterTable(NodeKind.timepitch.declaredParameters)
    static let varispeed = ParameterTable(NodeKind.varispeed.declaredParameters)
    static let environment = ParameterTable(NodeKind.environment.declaredParameters)
    static let voiceprocessor = ParameterTable(NodeKind.voiceprocessor.declaredParameters)
    static let eq = (1...EQKernel.maxBandCount).map { ParameterTable(NodeKind.effectParameters(.eq, bandCount: $0)) }
}
