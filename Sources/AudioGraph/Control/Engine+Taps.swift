// Control side. Installing and removing taps.

extension Engine {
    /// Installs a tap on `node`'s output bus. `handler` receives blocks of `frameCount` frames from
    /// `poll()`. A tapped node renders even when its chain does not reach the output. Returns the tap id.
    @discardableResult
    public func installTap(on node: String, bus: Int = 0, frameCount: Int = 4096,
                           handler: @escaping @Sendable (TapBuffer) -> Void) throws(EngineError) -> Int {
        try lock.withLock { _ throws(EngineError) in
            let record = try record(node)
            guard bus < record.kind.outputBusCount else {
                throw EngineError(.invalidBus, "'\(node)' has no output bus \(bus) to tap")
            }
            guard (1...1_048_576).contains(frameCount) else {
                throw EngineError(.outOfRange, "tap frameCount = \(frameCount) is out of range 1…1048576")
            }
            let id = state.nextTapID
            state.nextTapID += 1
            let capacity = max(frameCount * 4, Int(state.configuration.sampleRate))
            state.taps[id] = TapRecord(
                id: id, node: node, channelCount: record.outputChannelCount, frameCount: frameCount,
                capacityFrames: capacity, maxBlockFrames: state.configuration.blockFrames, handler: handler)
            republish()
            return id
        }
    }

    /// Removes a tap. Unknown ids are ignored.
    public func removeTap(_ id: Int) {
        lock.withLock { _ in
            guard let tap = state.taps.removeValue(forKey: id) else { return }
            republish()
            bury(tap)
        }
    }

    /// Runs `poll()`, then delivers what the taps still hold as one last block each, shorter than
    /// their `frameCount`. For the end of an offline render, so that a tap receives every frame
    /// rendered; while the render continues, the next blocks follow on as usual.
    public func flushTaps() {
        poll()
        var deliveries: [(@Sendable (TapBuffer) -> Void, TapBuffer)] = []
        lock.withLock { _ in
            for tap in state.taps.values {
                for block in tap.drain(includingPartial: true).blocks { deliveries.append((tap.handler, block)) }
            }
        }
        for (handler, block) in deliveries { handler(block) }
    }
}
