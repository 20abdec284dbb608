// Control side. Whether a voice processor that hears the engine's output would hear its own voice.

/// A processor whose reference is the engine's final output (an `input` with `voiceProcessing`, a
/// `voiceprocessor` with `reference: engine`) takes everything `main` plays for echo. When its own
/// cleaned output reaches `main`, the near talker is in its reference, 15 ms and more late: the
/// canceller subtracts the voice from itself (a talker −6.7 dB, PESQ 1.08 in double talk where 3.56 was
/// measured without the loop).
public enum VoiceSelfReference {
    /// Whether `node`'s output reaches the engine's output through `connections`.
    public static func reachesOutput(from node: String, connections: [Connection]) -> Bool {
        var seen: Set<String> = [node]
        var frontier = [node]
        while let current = frontier.popLast() {
            for c in connections where c.source == current {
                if c.destination == "main" || c.destination == "output" { return true }
                if seen.insert(c.destination).inserted { frontier.append(c.destination) }
            }
        }
        return false
    }

    /// Whether a node of `kind` with `parameters` takes the engine's output as its reference.
    public static func usesEngineReference(kind: NodeKind, parameters: [String: ParameterValue]) -> Bool {
        switch kind {
        case .input: parameters["voiceProcessing"] == .bool(true)
        case .voiceprocessor: parameters["reference"] == .string("engine")
        default: false
        }
    }

    /// What a patch warning or a journal line says about `node`.
    public static func warning(node: String) -> String {
        "'\(node)' cancels the engine's output as echo, and its own cleaned voice reaches main: the voice "
            + "is taken for an echo of itself and cancelled. Send the voice out through a recorder or the "
            + "processor's ports, not main, or give the processor its reference from its ports"
    }
}
