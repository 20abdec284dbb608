// Control side. The voice processor's parameters (AVAudioEngine's voice-processing properties, inventory
// §7, on a node of its own).
import AudioDSP

extension NodeKind {
    /// How hard the voice processor works: `quality` (the full canceller, residual-echo suppression and
    /// delay tracking) or `lowComplexity` (a shorter filter, for small machines).
    public static let voiceModeNames = ["quality", "lowComplexity"]
    /// AVAudioVoiceProcessingOtherAudioDuckingLevel: default, min, mid, max.
    public static let duckLevelNames = ["default", "min", "mid", "max"]
    /// How far each level ducks other audio, in dB (Apple documents only the order: min ducks least).
    public static let duckLevelDecibels: [Double] = [-10, -6, -15, -25]

    /// The linear gain of the ducking level named `name` (a name of `duckLevelNames`).
    static func duckGain(_ name: String) -> Float {
        let index = duckLevelNames.firstIndex(of: name) ?? 0
        return Float(EffectMath.exp(duckLevelDecibels[index] / 20 * 2.302_585_092_994_046))
    }
    /// What the reference (bus 1) holds besides its connections and ports: nothing more, or the engine's
    /// own final output (what goes to `out_1..N`).
    public static let voiceReferenceNames = ["ports", "engine"]

    static let voiceProcessorParameters: [ParameterSpec] =
        [modeParameter] + voiceSwitches + [
            ParameterSpec(
                .micChannels, .int, unit: "channels", range: 1...2, default: .int(1), creationOnly: true,
                "Microphone channels (bus 0, ports <node>_mic_N), and channels of the cleaned output; set at creation."),
            ParameterSpec(
                .referenceChannels, .int, unit: "channels", range: 1...2, default: .int(2), creationOnly: true,
                "Reference channels (bus 1, ports <node>_ref_N): what the loudspeakers play; set at creation. Two that carry one signal (the same on both, panned, or one port fed) are cancelled as one."
            ),
            ParameterSpec(
                .reference, .string, default: .string("ports"), choices: voiceReferenceNames,
                "engine adds the engine's own output (out_1..N) to the reference, for a rig whose loudspeakers play "
                    + "Soundstage; ports takes only bus 1 and the ref ports."),
            ParameterSpec(
                .ports, .bool, default: .bool(true), creationOnly: true,
                "false hides the JACK ports (<node>_mic_N, _ref_N, _out_N) for a use inside the graph only."),
            latencyParameter
        ]

    /// The `input` node's voice processing (AVAudioInputNode.setVoiceProcessingEnabled): the same
    /// processor behind the capture ports, with the engine's output as its reference.
    static let inputVoiceParameters: [ParameterSpec] =
        [
            ParameterSpec(
                .voiceProcessing, .bool, default: .bool(false), creationOnly: true,
                "Voice processing behind the capture ports (1 or 2 of them), against the engine's own output "
                    + "(setVoiceProcessingEnabled); set at creation. The parameters below apply when it is on."),
            modeParameter
        ] + voiceSwitches + [latencyParameter]

    private static let modeParameter = ParameterSpec(
        .mode, .string, default: .string("quality"), creationOnly: true, choices: voiceModeNames,
        "quality: echo cancellation with delay tracking and residual-echo suppression; lowComplexity: a "
            + "shorter canceller for small machines. Set at creation.")

    private static let voiceSwitches: [ParameterSpec] = [
        ParameterSpec(
            .bypass, .bool, default: .bool(false),
            "Passes the microphone through untouched, delayed by the processor's latency (isVoiceProcessingBypassed)."),
        ParameterSpec(
            .agc, .bool, default: .bool(true),
            "Automatic gain control of the cleaned voice (isVoiceProcessingAGCEnabled; on by default, as there)."),
        ParameterSpec(.noiseSuppression, .bool, default: .bool(true), "Suppresses steady background noise."),
        ParameterSpec(
            .inputMuted, .bool, default: .bool(false),
            "Output silence while voice activity detection keeps running: speech raises /voice/activity "
                + "(isVoiceProcessingInputMuted, muted-talker detection)."),
        ParameterSpec(
            .duckOthers, .bool, default: .bool(false),
            "While the processor runs, the engine's players (everything but live inputs and voice processors) go "
                + "down to duckLevel, gliding over 50 ms (other-audio ducking)."),
        ParameterSpec(
            .duckLevel, .string, default: .string("default"), choices: duckLevelNames,
            "How far other audio ducks: default −10 dB, min −6, mid −15, max −25 "
                + "(AVAudioVoiceProcessingOtherAudioDuckingLevel)."),
        ParameterSpec(
            .advancedDucking, .bool, default: .bool(false),
            "Duck only while someone talks, near end or far end (the reference above −50 dBFS), and for 300 ms "
                + "after (enableAdvancedDucking).")
    ]

    private static let latencyParameter = ParameterSpec(
        .latency, .int, unit: "frames", range: 0...1e6, default: .int(0), readOnly: true,
        "Delay the processor adds between microphone and output (reported on <node>_out_N).")
}
