// Control side (pure). Turns meter readings into `/meter` messages grouped into bundles that each fit
// one UDP datagram under 4 KB (python-osc's receive() reads 4096 bytes).
import AudioDSP
import AudioGraph

public enum OSCMeterPacking {
    /// Largest encoded bundle, in bytes.
    public static let maximumDatagramBytes = 4000

    /// `/meter s:node i:channels f:peak_1 … f:peak_N f:rms_1 … f:rms_N` (dBFS).
    public static func message(node: String, peakDecibels: [Float], rmsDecibels: [Float]) -> OSCMessage {
        var arguments: [OSCArgument] = [.string(node), .int32(Int32(peakDecibels.count))]
        arguments += peakDecibels.map { .float($0) }
        arguments += rmsDecibels.map { .float($0) }
        return OSCMessage("/meter", arguments)
    }

    /// `/voice/meter s:node f:erleDb f:delayMs i:doubleTalk`: a voice processor's echo attenuation, its
    /// tracked echo delay (−1 before it is known) and whether both ends talk.
    public static func voiceMessage(node: String, _ analysis: VoiceAnalysis) -> OSCMessage {
        OSCMessage(
            "/voice/meter",
            [.string(node), .float(analysis.erleDb), .float(analysis.delayMs), .int32(analysis.doubleTalk ? 1 : 0)])
    }

    /// The same for engine readings.
    public static func message(node: String, levels: [ChannelLevel]) -> OSCMessage {
        message(node: node, peakDecibels: levels.map(\.peakDecibels), rmsDecibels: levels.map(\.rmsDecibels))
    }

    /// Groups messages in order into bundles whose encoding stays within `limit` bytes. A message that
    /// cannot fit even alone is left out.
    public static func bundles(_ messages: [OSCMessage], limit: Int = maximumDatagramBytes) -> [[OSCMessage]] {
        let header = 16  // "#bundle\0" + time tag
        var groups: [[OSCMessage]] = []
        var current: [OSCMessage] = []
        var size = header
        for message in messages {
            let element = 4 + OSCPacket.encodedSize(of: message)
            guard header + element <= limit else { continue }
            if size + element > limit {
                groups.append(current)
                current = []
                size = header
            }
            current.append(message)
            size += element
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }
}
