// Control side. Changing a signal's channel count with the engine's rules (used by `convert` and
// `render --channels`).

extension AudioData {
    /// Why a channel count cannot be changed, as a clause for a message; nil when `source` channels
    /// can become `target`: N → N, N → 1 (the average of the channels) and 1 → N (the mono channel
    /// copied to each output).
    public static func channelMixProblem(from source: Int, to target: Int) -> String? {
        if target == source || target == 1 || source == 1 { return nil }
        return "there is no rule for mixing \(source) channels into \(target): Soundstage supports N → 1 "
            + "(the average of all channels) and 1 → N (the mono channel copied to each); pick the channels "
            + "you want with another tool first"
    }

    /// This audio with `count` channels: N → 1 is the average of the channels, 1 → N copies the
    /// mono channel into each output; N → N is unchanged. Nil for any other change
    /// (`channelMixProblem` says why).
    public func mixed(toChannelCount count: Int) -> AudioData? {
        Self.mix(channels, to: count).map { AudioData(channels: $0, sampleRate: sampleRate) }
    }

    /// Planar `channels` mixed to `count` channels by the rules of `mixed(toChannelCount:)`.
    public static func mix(_ channels: [[Float]], to count: Int) -> [[Float]]? {
        let source = channels.count
        if count == source { return channels }
        guard channelMixProblem(from: source, to: count) == nil, let first = channels.first else { return nil }
        if count == 1 {
            let scale = 1 / Float(source)
            var mono = [Float](repeating: 0, count: first.count)
            for channel in channels {
                for index in mono.indices { mono[index] += channel[index] * scale }
            }
            return [mono]
        }
        return Array(repeating: first, count: count)
    }
}
