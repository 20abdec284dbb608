// Control side, the API. Installing and removing taps.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Taps.swift).
import AudioDSP

extension Engine {
    /// Installs a tap on `node`'s output bus. `handler` receives blocks of `frameCount` frames from
    /// `poll()`. A tapped node renders even when its chain does not reach the output. Returns the tap id.
    @discardableResult
    public func installTap(
        on node: String, bus: Int = 0, frameCount: Int = 4096,
        handler: @escaping @Sendable (TapBuffer) -> Void
    ) throws(EngineError) -> Int {
        try control.withLock { core throws(EngineError) in
            try core.installTap(on: node, bus: bus, frameCount: frameCount, handler: handler)
        }
    }

    /// Removes a tap. Unknown ids are ignored.
    public func removeTap(_ id: Int) {
        control.withLock { core in core.removeTap(id) }
    }

    /// Runs `poll()`, then delivers what the taps still hold as one last block each, shorter than
    /// their `frameCount`. For the end of an offline render, so that a tap receives every frame
    /// rendered; while the render continues, the next blocks follow on as usual.
    public func flushTaps() {
        poll()
        let deliveries = control.withLock { $0.drainTapsIncludingPartial() }
        for (handler, block) in deliveries { handler(block) }
    }
}
