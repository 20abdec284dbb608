// Control side. Installing and removing taps.

extension EngineCore {
    func installTap(
        on node: String, bus: Int = 0, frameCount: Int = 4096,
        handler: @escaping @Sendable (TapBuffer) -> Void
    ) throws(EngineError) -> Int {
        let record = try record(node)
        guard bus < record.kind.outputBusCount else {
            throw EngineError(.invalidBus, "'\(node)' has no output bus \(bus) to tap")
        }
        guard (1...1_048_576).contains(frameCount) else {
            throw EngineError(.outOfRange, "tap frameCount = \(frameCount) is out of range 1…1048576")
        }
        let id = state.monitors.nextTapID
        state.monitors.nextTapID += 1
        let capacity = max(frameCount * 4, Int(state.configuration.sampleRate))
        state.monitors.taps[id] = TapRecord(
            id: id, node: node, channelCount: record.outputChannelCount, frameCount: frameCount,
            capacityFrames: capacity, maxBlockFrames: state.configuration.blockFrames, handler: handler)
        republish()
        return id
    }

    func removeTap(_ id: Int) {
        guard let tap = state.monitors.taps.removeValue(forKey: id) else { return }
        republish()
        bury(tap)
    }

    /// What the taps still hold, as one last block each.
    func drainTapsIncludingPartial() -> [(@Sendable (TapBuffer) -> Void, TapBuffer)] {
        var deliveries: [(@Sendable (TapBuffer) -> Void, TapBuffer)] = []
        for tap in state.monitors.taps.values {
            for block in tap.drain(includingPartial: true).blocks { deliveries.append((tap.handler, block)) }
        }
        return deliveries
    }
}
