// Control side (runs the render path itself, on the calling thread). Renders faster than real time
// with no audio server, for `soundstage render` and for tests.

/// Drives an engine's `RenderEngine` in host blocks of any size, collecting planar output.
public struct OfflineRenderer {
    public let engine: Engine
    /// Frames between `engine.poll()` calls (events, taps, deferred frees).
    public var pollInterval: Int

    public init(engine: Engine, pollInterval: Int = 1024) {
        self.engine = engine
        self.pollInterval = max(1, pollInterval)
    }

    /// Renders `frameCount` frames in host blocks of `hostBlockFrames`, feeding `inputs` (planar,
    /// optional) to the engine's capture channels, and hands each block to `consume` as planar
    /// channel pointers valid only during the call.
    public func render(
        frameCount: Int, hostBlockFrames: Int, inputs: [[Float]]? = nil,
        consume: (_ channels: [UnsafeBufferPointer<Float>]) -> Void
    ) {
        let block = max(1, hostBlockFrames)
        let outCount = engine.configuration.outputChannelCount
        let inCount = engine.configuration.inputChannelCount
        let outStorage = UnsafeMutablePointer<Float>.allocate(capacity: outCount * block)
        let inStorage = UnsafeMutablePointer<Float>.allocate(capacity: max(1, inCount * block))
        let outPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: outCount)
        let inPointers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: max(1, inCount))
        defer {
            outStorage.deallocate(); inStorage.deallocate(); outPointers.deallocate(); inPointers.deallocate()
        }
        for c in 0..<outCount { outPointers[c] = outStorage + c * block }
        for c in 0..<inCount { inPointers[c] = UnsafePointer(inStorage + c * block) }
        var done = 0
        var sincePoll = 0
        while done < frameCount {
            let n = min(block, frameCount - done)
            for c in 0..<inCount {
                let dst = inStorage + c * block
                for i in 0..<n {
                    let frame = done + i
                    if let inputs, c < inputs.count, frame < inputs[c].count {
                        dst[i] = inputs[c][frame]
                    } else {
                        dst[i] = 0
                    }
                }
            }
            engine.renderEngine.render(
                frameCount: n, inputs: inCount > 0 ? UnsafePointer(inPointers) : nil,
                inputCount: inCount, outputs: UnsafePointer(outPointers), outputCount: outCount)
            consume((0..<outCount).map { UnsafeBufferPointer(start: outStorage + $0 * block, count: n) })
            done += n
            sincePoll += n
            if sincePoll >= pollInterval {
                engine.poll()
                sincePoll = 0
            }
        }
        engine.poll()
    }

    /// Renders `frameCount` frames and returns them planar.
    public func render(frameCount: Int, hostBlockFrames: Int, inputs: [[Float]]? = nil) -> [[Float]] {
        var out = [[Float]](repeating: [], count: engine.configuration.outputChannelCount)
        for c in out.indices { out[c].reserveCapacity(frameCount) }
        render(frameCount: frameCount, hostBlockFrames: hostBlockFrames, inputs: inputs) { channels in
            for (c, ch) in channels.enumerated() { out[c].append(contentsOf: ch) }
        }
        return out
    }
}
