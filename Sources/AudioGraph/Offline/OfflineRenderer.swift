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
    /// optional) to the engine's capture channels and `ports` to the exposed nodes' input ports by short
    /// name (`vp_mic_1`, `reverb_in_2`: what JACK would deliver there), and hands each block to `consume`
    /// as planar channel pointers valid only during the call. Signals shorter than the render end in
    /// silence.
    public func render(
        frameCount: Int, hostBlockFrames: Int, inputs: [[Float]]? = nil, ports: [String: [Float]] = [:],
        consume: (_ channels: [UnsafeBufferPointer<Float>]) -> Void
    ) {
        var portFeed = PortFeed(ports: ports, block: max(1, hostBlockFrames))
        defer { portFeed.deallocate() }
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
            let inserts = portFeed.prepare(engine.hostInsertLayout, from: done, frames: n)
            engine.renderEngine.render(
                frameCount: n, inputs: inCount > 0 ? UnsafePointer(inPointers) : nil,
                inputCount: inCount, outputs: UnsafePointer(outPointers), outputCount: outCount, inserts: inserts)
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
    public func render(
        frameCount: Int, hostBlockFrames: Int, inputs: [[Float]]? = nil, ports: [String: [Float]] = [:]
    ) -> [[Float]] {
        var out = [[Float]](repeating: [], count: engine.configuration.outputChannelCount)
        for c in out.indices { out[c].reserveCapacity(frameCount) }
        render(frameCount: frameCount, hostBlockFrames: hostBlockFrames, inputs: inputs, ports: ports) { channels in
            for (c, ch) in channels.enumerated() { out[c].append(contentsOf: ch) }
        }
        return out
    }
}

/// Offline stand-ins for the host's insert buffers: each block, the signals named by port are copied to
/// the insert channels the layout gives those ports; output ports get scratch buffers.
private struct PortFeed {
    let ports: [String: [Float]]
    let block: Int
    private var storage: UnsafeMutablePointer<Float>?
    private var inputs: UnsafeMutablePointer<UnsafePointer<Float>?>?
    private var outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
    private var capacity = 0

    init(ports: [String: [Float]], block: Int) {
        self.ports = ports
        self.block = block
    }

    /// The insert buffers for frames `start ..< start + frames` under `layout` (none without ports).
    mutating func prepare(_ layout: HostInsertLayout, from start: Int, frames: Int) -> HostInsertIO {
        let span = layout.channelSpan
        guard span > 0, !ports.isEmpty else { return .none }
        if span > capacity { grow(to: span) }
        guard let storage, let inputs, let outputs else { return .none }
        for c in 0..<span {
            inputs[c] = nil
            outputs[c] = storage + (span + c) * block
        }
        for insert in layout.inserts {
            for (index, name) in insert.portNames.inputs.enumerated() {
                guard let signal = ports[name] else { continue }
                let channel = insert.base + index
                let destination = storage + channel * block
                for i in 0..<frames { destination[i] = start + i < signal.count ? signal[start + i] : 0 }
                inputs[channel] = UnsafePointer(destination)
            }
        }
        return HostInsertIO(inputs: UnsafePointer(inputs), outputs: UnsafePointer(outputs), channelCount: span)
    }

    private mutating func grow(to span: Int) {
        deallocate()
        storage = .allocate(capacity: 2 * span * block)
        storage?.initialize(repeating: 0, count: 2 * span * block)
        inputs = .allocate(capacity: span)
        outputs = .allocate(capacity: span)
        capacity = span
    }

    func deallocate() {
        storage?.deallocate()
        inputs?.deallocate()
        outputs?.deallocate()
    }
}
