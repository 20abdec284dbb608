// Control side. The node kinds a graph can hold, with their bus shapes.

/// The user-facing role of a node. Kind names are what patches and OSC use.
public enum NodeKind: String, Sendable, CaseIterable, Codable {
    /// The engine's single output (JACK playback ports `out_1..N`). Implicit, named `output`.
    case output
    /// A 2D mixer: any number of input buses, one output bus. The implicit main mixer is named `main`.
    case mixer
    /// A buffer player: plays a preloaded buffer or file region once or looping.
    case player
    /// A simple file player (AVAudioPlayer): loop count, seek, fades, rate with pitch kept.
    case audioplayer
    /// The live input (JACK capture ports `in_1..N`).
    case input
    /// Algorithmic reverb with the 13 factory presets (AVAudioUnitReverb).
    case reverb
    /// Delay with feedback and a low-pass in the loop (AVAudioUnitDelay).
    case delay
    /// Multi-effect distortion with the 22 presets (AVAudioUnitDistortion).
    case distortion
    /// N-band parametric EQ with 11 filter types (AVAudioUnitEQ).
    case eq
    /// Time stretch and pitch shift, independently (AVAudioUnitTimePitch, on Rubber Band).
    case timepitch
    /// Resampling playback: rate 0.25–4, pitch follows (AVAudioUnitVarispeed).
    case varispeed
    /// A 3D mixer with an implicit listener (AVAudioEnvironmentNode): its sources are the nodes
    /// connected to it, placed by their own 3D properties.
    case environment
    /// Voice processing (AVAudioEngine's voice-processing I/O): echo cancellation, noise suppression and
    /// AGC of a microphone (bus 0) against what the loudspeakers play (bus 1, the reference).
    case voiceprocessor

    /// Number of input buses, or nil for "any number" (mixers).
    public var inputBusCount: Int? {
        switch self {
        case .output: return 1
        case .mixer, .environment: return nil
        case .player, .audioplayer, .input: return 0
        case .reverb, .delay, .distortion, .eq, .timepitch, .varispeed: return 1
        case .voiceprocessor: return 2
        }
    }

    /// Number of output buses.
    public var outputBusCount: Int { self == .output ? 0 : 1 }

    /// True for kinds whose volume/pan (AVAudioMixing settings) apply where they feed a mixer. Effects
    /// have none, as in AVAudioEngine ("effects cannot talk to a downstream mixer").
    public var hasMixingSettings: Bool {
        self == .mixer || self == .player || self == .audioplayer || self == .input || self == .environment
    }

    /// True for the kinds that carry AVAudio3DMixing properties (position, cone, occlusion…), which
    /// apply where they feed an environment and travel with them.
    public var is3DSource: Bool { self == .mixer || self == .player || self == .audioplayer || self == .input }

    /// True for the kinds that render through a player's schedule queue.
    public var isPlayer: Bool { self == .player || self == .audioplayer }

    /// True for the effect kinds.
    public var isEffect: Bool { [.reverb, .delay, .distortion, .eq, .timepitch, .varispeed].contains(self) }

    /// True for the time effects: they pull more or less input than they output, so their sources run
    /// on the effect's own clock (AVAudioUnitTimeEffect).
    public var isTimeEffect: Bool { self == .timepitch || self == .varispeed }

    /// The kinds a graph can be given (`Engine.attach`, `/node/new`, a patch's nodes), in declaration order:
    /// every kind but `output`, which the engine has exactly one of. An `input` needs capture channels too.
    public static var creatableKinds: [NodeKind] { allCases.filter(\.isCreatable) }

    /// False for `output` only.
    public var isCreatable: Bool { self != .output }

    /// Names of all kinds, for error messages.
    public static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
